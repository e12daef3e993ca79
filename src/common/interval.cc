#include "common/interval.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/strings.h"

namespace sluice {
namespace {

// Microseconds per unit, or -1 when the word is not a unit.
int64_t UnitMicros(const std::string& unit) {
  static const std::pair<const char*, int64_t> kUnits[] = {
      {"microsecond", 1},
      {"us", 1},
      {"millisecond", 1000},
      {"milli", 1000},
      {"ms", 1000},
      {"second", kMicrosPerSecond},
      {"sec", kMicrosPerSecond},
      {"s", kMicrosPerSecond},
      {"minute", 60 * kMicrosPerSecond},
      {"min", 60 * kMicrosPerSecond},
      {"m", 60 * kMicrosPerSecond},
      {"hour", 3600 * kMicrosPerSecond},
      {"h", 3600 * kMicrosPerSecond},
      {"day", kMicrosPerDay},
      {"d", kMicrosPerDay},
      {"week", 7 * kMicrosPerDay},
      {"w", 7 * kMicrosPerDay},
      {"month", kMicrosPerMonth},
      {"year", 12 * kMicrosPerMonth},
  };
  std::string singular = unit;
  if (singular.size() > 2 && singular.back() == 's') singular.pop_back();
  for (const auto& [name, micros] : kUnits) {
    if (unit == name || singular == name) return micros;
  }
  return -1;
}

// ParseDuration's grammar; `months` (when not null) is set when a month or year term appears.
Result<Duration> Parse(std::string_view text, bool* months) {
  auto error = [&](std::string_view what) {
    return Status::InvalidArgument("invalid interval '" + std::string(text) +
                                   "': " + std::string(what));
  };
  std::string s = AsciiLower(text);
  for (char& c : s) {
    if (c == '\'' || c == '"') c = ' ';
  }
  size_t pos = 0;
  auto skip_space = [&] {
    while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos]))) ++pos;
  };
  skip_space();
  if (s.compare(pos, 8, "interval") == 0 &&
      (pos + 8 == s.size() || std::isspace(static_cast<unsigned char>(s[pos + 8])))) {
    pos += 8;
  }

  long double total = 0;
  int terms = 0;
  for (;;) {
    skip_space();
    if (pos >= s.size()) break;
    // Number: [-+]digits[.digits]
    size_t start = pos;
    if (s[pos] == '-' || s[pos] == '+') ++pos;
    size_t digits_start = pos;
    while (pos < s.size() && (std::isdigit(static_cast<unsigned char>(s[pos])) || s[pos] == '.')) {
      ++pos;
    }
    if (pos == digits_start) return error("expected a number at '" + s.substr(start) + "'");
    std::string number = s.substr(start, pos - start);
    long double value;
    try {
      size_t used = 0;
      value = std::stold(number, &used);
      if (used != number.size()) return error("bad number '" + number + "'");
    } catch (...) {
      return error("bad number '" + number + "'");
    }
    skip_space();
    size_t unit_start = pos;
    while (pos < s.size() && std::isalpha(static_cast<unsigned char>(s[pos]))) ++pos;
    if (pos == unit_start) return error("missing unit after '" + number + "' (e.g. seconds)");
    std::string unit = s.substr(unit_start, pos - unit_start);
    int64_t unit_micros = UnitMicros(unit);
    if (unit_micros < 0) return error("unknown unit '" + unit + "'");
    if (months != nullptr && unit_micros >= kMicrosPerMonth) *months = true;
    total += value * static_cast<long double>(unit_micros);
    ++terms;
  }
  if (terms == 0) return error("empty");
  if (std::fabs(total) > static_cast<long double>(std::numeric_limits<int64_t>::max())) {
    return error("out of range");
  }
  return Duration{static_cast<int64_t>(std::llround(total))};
}

}  // namespace

Result<Duration> ParseDuration(std::string_view text) { return Parse(text, nullptr); }

bool HasMonthUnit(std::string_view text) {
  bool months = false;
  return Parse(text, &months).ok() && months;
}

std::string Duration::ToString() const {
  if (micros == 0) return "0 seconds";
  struct Unit {
    const char* name;
    int64_t micros;
  };
  static const Unit kUnits[] = {{"day", kMicrosPerDay},
                                {"hour", 3600 * kMicrosPerSecond},
                                {"minute", 60 * kMicrosPerSecond},
                                {"second", kMicrosPerSecond},
                                {"millisecond", 1000},
                                {"microsecond", 1}};
  std::string out;
  int64_t rest = micros;
  if (rest < 0) {
    out = "-";
    rest = -rest;
  }
  bool first = true;
  for (const Unit& u : kUnits) {
    int64_t n = rest / u.micros;
    if (n == 0) continue;
    rest -= n * u.micros;
    if (!first) out += ' ';
    first = false;
    out += std::to_string(n) + " " + u.name + (n == 1 ? "" : "s");
  }
  return out;
}

}  // namespace sluice
