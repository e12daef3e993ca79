#include "delta/values.h"

#include "common/strings.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace sluice::delta {

using engine::TypeId;

namespace {

// Howard Hinnant's days_from_civil / civil_from_days.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t yy = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = yy + (*m <= 2);
}

bool ReadDigits(std::string_view s, size_t* pos, int n, int64_t* out) {
  if (*pos + n > s.size()) return false;
  int64_t v = 0;
  for (int i = 0; i < n; ++i) {
    char c = s[*pos + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool ParseDatePart(std::string_view s, size_t* pos, int64_t* days) {
  int64_t y, m, d;
  bool neg = false;
  if (*pos < s.size() && (s[*pos] == '-' || s[*pos] == '+')) {
    neg = s[*pos] == '-';
    ++*pos;
  }
  size_t start = *pos;
  while (*pos < s.size() && std::isdigit(static_cast<unsigned char>(s[*pos]))) ++*pos;
  if (*pos - start < 4) return false;
  y = std::stoll(std::string(s.substr(start, *pos - start)));
  if (neg) y = -y;
  if (*pos >= s.size() || s[*pos] != '-') return false;
  ++*pos;
  if (!ReadDigits(s, pos, 2, &m) || *pos >= s.size() || s[*pos] != '-') return false;
  ++*pos;
  if (!ReadDigits(s, pos, 2, &d)) return false;
  if (m < 1 || m > 12 || d < 1 || d > 31) return false;
  *days = DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  return true;
}

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

Result<int32_t> ParseDateDays(std::string_view text) {
  std::string s = Trim(text);
  size_t pos = 0;
  int64_t days = 0;
  if (!ParseDatePart(s, &pos, &days) || pos != s.size()) {
    return Status::InvalidArgument("invalid date '" + std::string(text) + "'");
  }
  return static_cast<int32_t>(days);
}

Result<int64_t> ParseTimestampMicros(std::string_view text) {
  std::string s = Trim(text);
  auto bad = [&]() {
    return Status::InvalidArgument("invalid timestamp '" + std::string(text) + "'");
  };
  size_t pos = 0;
  int64_t days = 0;
  if (!ParseDatePart(s, &pos, &days)) return bad();
  int64_t hh = 0, mm = 0, ss = 0, frac_us = 0;
  if (pos < s.size() && (s[pos] == 'T' || s[pos] == ' ')) {
    ++pos;
    if (!ReadDigits(s, &pos, 2, &hh) || pos >= s.size() || s[pos] != ':') return bad();
    ++pos;
    if (!ReadDigits(s, &pos, 2, &mm)) return bad();
    if (pos < s.size() && s[pos] == ':') {
      ++pos;
      if (!ReadDigits(s, &pos, 2, &ss)) return bad();
      if (pos < s.size() && s[pos] == '.') {
        ++pos;
        int digits = 0;
        while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
          if (digits < 6) frac_us = frac_us * 10 + (s[pos] - '0');
          ++digits;
          ++pos;
        }
        if (digits == 0) return bad();
        for (int i = digits; i < 6; ++i) frac_us *= 10;
      }
    }
  }
  int64_t offset_s = 0;
  if (pos < s.size()) {
    if (s[pos] == 'Z' || s[pos] == 'z') {
      ++pos;
    } else if (s[pos] == '+' || s[pos] == '-') {
      int sign = s[pos] == '-' ? -1 : 1;
      ++pos;
      int64_t oh = 0, om = 0;
      if (!ReadDigits(s, &pos, 2, &oh)) return bad();
      if (pos < s.size() && s[pos] == ':') ++pos;
      if (pos < s.size() && !ReadDigits(s, &pos, 2, &om)) return bad();
      offset_s = sign * (oh * 3600 + om * 60);
    } else if (s.compare(pos, std::string::npos, " UTC") == 0) {
      pos = s.size();
    }
  }
  if (pos != s.size() || hh > 23 || mm > 59 || ss > 60) return bad();
  int64_t secs = days * 86400 + hh * 3600 + mm * 60 + ss - offset_s;
  return secs * 1000000 + frac_us;
}

std::string FormatTimestampMicros(int64_t micros) {
  int64_t secs = micros / 1000000;
  int64_t us = micros % 1000000;
  if (us < 0) {
    us += 1000000;
    secs -= 1;
  }
  int64_t days = secs / 86400;
  int64_t rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    days -= 1;
  }
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04lld-%02u-%02u %02lld:%02lld:%02lld.%06lld+00",
                static_cast<long long>(y), m, d, static_cast<long long>(rem / 3600),
                static_cast<long long>((rem / 60) % 60), static_cast<long long>(rem % 60),
                static_cast<long long>(us));
  return buf;
}

std::string FormatMillisIso(int64_t millis) {
  std::string s = FormatTimestampMicros(millis * 1000);  // YYYY-MM-DD HH:MM:SS.ffffff+00
  // -> YYYY-MM-DDTHH:MM:SS.fffZ
  std::string date = s.substr(0, 10);
  std::string time = s.substr(11, 12);
  return date + "T" + time + "Z";
}

Result<std::string> PartitionValueSql(const std::optional<std::string>& value,
                                      const engine::DataType& type) {
  std::string type_sql = type.ToSql();
  if (type.id == TypeId::kNull) return std::string("NULL");  // void column
  if (!value.has_value() || value->empty()) return "CAST(NULL AS " + type_sql + ")";
  const std::string& v = *value;
  switch (type.id) {
    case TypeId::kVarchar:
      return QuoteLiteral(v);
    case TypeId::kBlob:
      return "encode(" + QuoteLiteral(v) + ")";
    case TypeId::kTimestampTz:
    case TypeId::kTimestamp: {
      auto micros = ParseTimestampMicros(v);
      if (!micros.ok()) return micros.status();
      std::string text = FormatTimestampMicros(*micros);
      if (type.id == TypeId::kTimestamp) text = text.substr(0, text.size() - 3);  // no "+00"
      return "CAST(" + QuoteLiteral(text) + " AS " + type_sql + ")";
    }
    case TypeId::kDate: {
      auto days = ParseDateDays(v);
      if (!days.ok()) return days.status();
      return "CAST(" + QuoteLiteral(v) + " AS DATE)";
    }
    case TypeId::kBoolean: {
      std::string t = Trim(v);
      if (t != "true" && t != "false")
        return Status::InvalidArgument("invalid boolean '" + v + "'");
      return t;
    }
    default:
      if (engine::IsNumeric(type.id)) {
        // Validate: digits, sign, dot, exponent, or Spark's NaN/Infinity spellings.
        std::string t = Trim(v);
        bool ok = !t.empty();
        for (char c : t) {
          if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.' ||
                c == 'e' || c == 'E')) {
            ok = false;
          }
        }
        if (t == "NaN" || t == "Infinity" || t == "-Infinity") ok = true;
        if (!ok) return Status::InvalidArgument("invalid number '" + v + "' for " + type_sql);
        return "CAST(" + QuoteLiteral(t) + " AS " + type_sql + ")";
      }
      return Status::NotSupported("partition column of type " + type_sql);
  }
}

Result<Comparable> ParseComparable(std::string_view text, const engine::DataType& type) {
  switch (type.id) {
    case TypeId::kVarchar:
      return Comparable(std::string(text));
    case TypeId::kBoolean: {
      std::string t = Trim(text);
      if (t == "true") return Comparable(true);
      if (t == "false") return Comparable(false);
      return Status::InvalidArgument("invalid boolean '" + std::string(text) + "'");
    }
    case TypeId::kDate: {
      auto d = ParseDateDays(text);
      if (!d.ok()) return d.status();
      return Comparable(static_cast<int64_t>(*d));
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz: {
      auto t = ParseTimestampMicros(text);
      if (!t.ok()) return t.status();
      return Comparable(*t);
    }
    default:
      if (engine::IsNumeric(type.id)) {
        std::string t = Trim(text);
        char* end = nullptr;
        long double v = std::strtold(t.c_str(), &end);
        if (t.empty() || end != t.c_str() + t.size()) {
          return Status::InvalidArgument("invalid number '" + std::string(text) + "'");
        }
        return Comparable(v);
      }
      return Comparable(std::monostate{});
  }
}

std::optional<int> CompareValues(const Comparable& a, const Comparable& b) {
  if (a.index() != b.index() || std::holds_alternative<std::monostate>(a)) return std::nullopt;
  return std::visit(
      [&](const auto& x) -> std::optional<int> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return std::nullopt;
        } else {
          const T& y = std::get<T>(b);
          if (x < y) return -1;
          if (y < x) return 1;
          return 0;
        }
      },
      a);
}

}  // namespace sluice::delta
