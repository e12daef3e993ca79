// Result<T>: either a value of type T or a non-OK Status.
//
// Result is [[nodiscard]]. Accessing the value of an error Result is a programmer mistake and
// aborts (SLUICE_DCHECK-style): check ok() or use SLUICE_ASSIGN_OR_RETURN.
//
// This is a public header (include/sluice/): the engine's own Result, used unchanged by the
// implementation (src/common/result.h only includes this file) and by users of the C++ API.
// Thread safety: as T; distinct objects may be used from any thread.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <utility>
#include <variant>

#include "sluice/status.h"

namespace sluice {

template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<T, Status>, "Result<Status> is not allowed");

 public:
  // A non-OK status. Passing an OK status is a programmer mistake: it becomes Internal.
  Result(Status status)  // NOLINT(google-explicit-constructor)
      : repr_(status.ok() ? Status::Internal("Result constructed from an OK Status")
                          : std::move(status)) {}
  Result(const T& value) : repr_(value) {}        // NOLINT(google-explicit-constructor)
  Result(T&& value) : repr_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U&&, T> &&
                                                    !std::is_same_v<std::decay_t<U>, T> &&
                                                    !std::is_same_v<std::decay_t<U>, Status> &&
                                                    !std::is_same_v<std::decay_t<U>, Result<T>>>>
  Result(U&& value) : repr_(T(std::forward<U>(value))) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(repr_); }

  // OK when holding a value.
  Status status() const { return ok() ? Status::OK() : std::get<Status>(repr_); }

  const T& ValueOrDie() const& {
    CheckOk();
    return std::get<T>(repr_);
  }
  T& ValueOrDie() & {
    CheckOk();
    return std::get<T>(repr_);
  }
  T ValueOrDie() && {
    CheckOk();
    return std::move(std::get<T>(repr_));
  }
  // Moves the value out; the Result is then unspecified.
  T MoveValueUnsafe() { return std::move(std::get<T>(repr_)); }

  const T& operator*() const& { return ValueOrDie(); }
  T& operator*() & { return ValueOrDie(); }
  const T* operator->() const { return &ValueOrDie(); }
  T* operator->() { return &ValueOrDie(); }

  T ValueOr(T fallback) const& { return ok() ? std::get<T>(repr_) : std::move(fallback); }

  // Adds context to the error; a value passes through.
  Result<T> WithContext(std::string_view context) && {
    if (ok()) return std::move(*this);
    return std::get<Status>(repr_).WithContext(context);
  }

 private:
  void CheckOk() const {
    if (!ok()) {
      std::fprintf(stderr, "Result::ValueOrDie on error: %s\n",
                   std::get<Status>(repr_).ToString().c_str());
      std::abort();
    }
  }
  std::variant<Status, T> repr_;
};

template <typename T>
Status ToStatus(const Result<T>& r) {
  return r.status();
}

}  // namespace sluice

#define SLUICE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                 \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = tmp.MoveValueUnsafe()

// `lhs` is a declaration or an assignable expression: SLUICE_ASSIGN_OR_RETURN(auto x, F());
#define SLUICE_ASSIGN_OR_RETURN(lhs, rexpr) \
  SLUICE_ASSIGN_OR_RETURN_IMPL(SLUICE_CONCAT(_sluice_result_, __LINE__), lhs, rexpr)

#define SLUICE_ASSIGN_OR_RETURN_CTX_IMPL(tmp, lhs, rexpr, context) \
  auto tmp = (rexpr);                                              \
  if (!tmp.ok()) return tmp.status().WithContext(context);         \
  lhs = tmp.MoveValueUnsafe()

// Like SLUICE_ASSIGN_OR_RETURN, adding context to the error.
#define SLUICE_ASSIGN_OR_RETURN_CTX(lhs, rexpr, context) \
  SLUICE_ASSIGN_OR_RETURN_CTX_IMPL(SLUICE_CONCAT(_sluice_result_, __LINE__), lhs, rexpr, context)
