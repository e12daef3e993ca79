// Parsing of durations as users write them in SQL and options:
//   "10 seconds", "5 minutes", "1 hour 30 minutes", "500 ms", "2 days", "1 week", "1 month",
//   "INTERVAL 10 SECONDS", "INTERVAL '10' SECOND", "INTERVAL '1 minute'", "10s", "100ms".
// Units (case-insensitive, singular or plural): microsecond(s)/us, millisecond(s)/ms/milli(s),
// second(s)/sec(s)/s, minute(s)/min(s)/m, hour(s)/h, day(s)/d, week(s)/w, month(s), year(s).
// A month counts as 31 days and a year as 12 months, as Spark's watermark delay does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice {

// A length of time in microseconds. Non-negative for delays; the parser accepts a leading '-'.
struct Duration {
  int64_t micros = 0;

  static constexpr Duration Micros(int64_t us) { return {us}; }
  static constexpr Duration Millis(int64_t ms) { return {ms * 1000}; }
  static constexpr Duration Seconds(int64_t s) { return {s * 1000 * 1000}; }

  int64_t millis() const { return micros / 1000; }
  auto operator<=>(const Duration&) const = default;

  // A canonical text, e.g. "1 hour 30 minutes", "250 milliseconds", "0 seconds".
  std::string ToString() const;
};

inline constexpr int64_t kMicrosPerSecond = 1000 * 1000;
inline constexpr int64_t kMicrosPerDay = 24LL * 3600 * kMicrosPerSecond;
inline constexpr int64_t kMicrosPerMonth = 31 * kMicrosPerDay;

// Parses one of the forms above. Errors are InvalidArgument naming the text and what is wrong.
Result<Duration> ParseDuration(std::string_view text);

// True when `text` (a form above) has a month or year term: a calendar length that a fixed
// number of microseconds only approximates. False for text ParseDuration refuses.
bool HasMonthUnit(std::string_view text);

}  // namespace sluice
