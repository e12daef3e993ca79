// Status: the outcome of an operation that can fail, as a value.
//
// Errors are values in Sluice (docs/architecture.md "Conventions"): functions that can fail return
// Status or Result<T>, both [[nodiscard]]. No exception crosses a module boundary. A Status carries
// a code and a message; context is added on the way up with WithContext ("reading offsets/3: ...").
//
// This is a public header (include/sluice/): the engine's own Status, used unchanged by the
// implementation (src/common/status.h only includes this file) and by users of the C++ API.
//
// Thread safety: a Status is an immutable value; distinct objects may be used from any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace sluice {

enum class StatusCode : char {
  kOk = 0,
  kInvalidArgument = 1,  // the caller (user input, SQL, options) asked for something invalid
  kNotFound = 2,         // a table, file, key or version does not exist
  kAlreadyExists = 3,    // create-if-absent found the target present
  kIOError = 4,          // the operating system or storage failed
  kCorruption = 5,       // stored bytes do not parse or violate their format
  kConflict = 6,         // a concurrent writer won (Delta commit race, checkpoint in use)
  kNotSupported = 7,     // valid request that Sluice does not implement (yet)
  kCancelled = 8,        // stopped by request (Ctrl-C, Stop(), injected crash)
  kInternal = 9,         // a bug in Sluice
};

// Returns the code's name as printed in messages, e.g. "Invalid argument".
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  // OK. Cheap: holds no allocation.
  Status() noexcept = default;
  Status(StatusCode code, std::string message);

  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&& other) noexcept = default;
  Status& operator=(Status&& other) noexcept = default;
  ~Status() = default;

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return {StatusCode::kInvalidArgument, std::move(msg)};
  }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status AlreadyExists(std::string msg) {
    return {StatusCode::kAlreadyExists, std::move(msg)};
  }
  static Status IOError(std::string msg) { return {StatusCode::kIOError, std::move(msg)}; }
  static Status Corruption(std::string msg) { return {StatusCode::kCorruption, std::move(msg)}; }
  static Status Conflict(std::string msg) { return {StatusCode::kConflict, std::move(msg)}; }
  static Status NotSupported(std::string msg) {
    return {StatusCode::kNotSupported, std::move(msg)};
  }
  static Status Cancelled(std::string msg) { return {StatusCode::kCancelled, std::move(msg)}; }
  static Status Internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }

  // An IOError from errno, e.g. FromErrno(ENOSPC, "writing /x/y") -> "writing /x/y: No space
  // left on device".
  static Status FromErrno(int err, std::string_view context);

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return ok() ? StatusCode::kOk : state_->code; }
  // The message without the code name; empty when OK.
  const std::string& message() const;

  bool IsInvalidArgument() const { return code() == StatusCode::kInvalidArgument; }
  bool IsNotFound() const { return code() == StatusCode::kNotFound; }
  bool IsAlreadyExists() const { return code() == StatusCode::kAlreadyExists; }
  bool IsIOError() const { return code() == StatusCode::kIOError; }
  bool IsCorruption() const { return code() == StatusCode::kCorruption; }
  bool IsConflict() const { return code() == StatusCode::kConflict; }
  bool IsNotSupported() const { return code() == StatusCode::kNotSupported; }
  bool IsCancelled() const { return code() == StatusCode::kCancelled; }
  bool IsInternal() const { return code() == StatusCode::kInternal; }

  // Returns a copy whose message is "<context>: <message>". OK stays OK.
  Status WithContext(std::string_view context) const;

  // "OK" or "<code name>: <message>".
  std::string ToString() const;

  bool operator==(const Status& other) const {
    return code() == other.code() && message() == other.message();
  }

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::unique_ptr<State> state_;  // null means OK
};

}  // namespace sluice

#define SLUICE_CONCAT_IMPL(a, b) a##b
#define SLUICE_CONCAT(a, b) SLUICE_CONCAT_IMPL(a, b)

// Returns the Status of `expr` from the enclosing function when it is not OK.
#define SLUICE_RETURN_NOT_OK(expr)                          \
  do {                                                      \
    ::sluice::Status _sluice_st = ::sluice::ToStatus(expr); \
    if (!_sluice_st.ok()) return _sluice_st;                \
  } while (false)

// Like SLUICE_RETURN_NOT_OK, adding context (any expression convertible to string_view).
#define SLUICE_RETURN_NOT_OK_CTX(expr, context)                   \
  do {                                                            \
    ::sluice::Status _sluice_st = ::sluice::ToStatus(expr);       \
    if (!_sluice_st.ok()) return _sluice_st.WithContext(context); \
  } while (false)

namespace sluice {
inline const Status& ToStatus(const Status& s) { return s; }
inline Status ToStatus(Status&& s) { return std::move(s); }
}  // namespace sluice
