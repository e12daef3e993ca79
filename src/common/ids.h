// Strong id types: a batch id, a table version and a source offset are all 64-bit integers,
// but mixing them up is a bug the compiler should catch.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace sluice {

// StrongId<Tag>: an int64 with its own type. Explicit construction, comparison, increment and
// hashing; no implicit arithmetic. value() gives the raw number for formats and logs.
template <typename Tag>
class StrongId {
 public:
  constexpr StrongId() = default;
  constexpr explicit StrongId(int64_t v) : value_(v) {}

  constexpr int64_t value() const { return value_; }
  constexpr StrongId Next() const { return StrongId(value_ + 1); }
  constexpr StrongId Prev() const { return StrongId(value_ - 1); }
  constexpr StrongId& operator++() {
    ++value_;
    return *this;
  }

  constexpr auto operator<=>(const StrongId&) const = default;

  std::string ToString() const { return std::to_string(value_); }
  friend std::ostream& operator<<(std::ostream& os, StrongId id) { return os << id.value_; }

 private:
  int64_t value_ = 0;
};

struct BatchIdTag {};
struct VersionTag {};
struct OffsetTag {};

// A micro-batch id: dense, starting at 0 (offsets/<N>, commits/<N>).
using BatchId = StrongId<BatchIdTag>;
// A Delta table version (the N of _delta_log/<N>.json).
using Version = StrongId<VersionTag>;
// A position within one source partition (a Kafka offset, a file log index).
using Offset = StrongId<OffsetTag>;

}  // namespace sluice

template <typename Tag>
struct std::hash<sluice::StrongId<Tag>> {
  size_t operator()(sluice::StrongId<Tag> id) const noexcept {
    return std::hash<int64_t>()(id.value());
  }
};
