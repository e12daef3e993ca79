#include "stream/time_format.h"

#include <cstdio>

namespace sluice::stream {

namespace {

constexpr int64_t kMsPerDay = 86'400'000;

// Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian calendar).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, int64_t* m, int64_t* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = yoe + era * 400 + (*m <= 2);
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace

std::string FormatUtcTimestampMs(int64_t epoch_ms) {
  const int64_t days = FloorDiv(epoch_ms, kMsPerDay);
  int64_t ms_of_day = epoch_ms - days * kMsPerDay;
  int64_t y, m, d;
  CivilFromDays(days, &y, &m, &d);
  const int64_t hh = ms_of_day / 3'600'000;
  ms_of_day %= 3'600'000;
  const int64_t mm = ms_of_day / 60'000;
  ms_of_day %= 60'000;
  const int64_t ss = ms_of_day / 1000;
  const int64_t sss = ms_of_day % 1000;
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%03lldZ",
                static_cast<long long>(y), static_cast<long long>(m), static_cast<long long>(d),
                static_cast<long long>(hh), static_cast<long long>(mm), static_cast<long long>(ss),
                static_cast<long long>(sss));
  return buf;
}

Result<int64_t> ParseUtcTimestampMs(std::string_view text) {
  // yyyy-MM-ddTHH:mm:ss.SSSZ = 24 characters
  auto bad = [&] {
    return Status::InvalidArgument("'" + std::string(text.substr(0, 40)) +
                                   "' is not a timestamp of the form yyyy-MM-ddTHH:mm:ss.SSSZ");
  };
  if (text.size() != 24) return bad();
  static constexpr char kShape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
  for (size_t i = 0; i < 24; ++i) {
    if (kShape[i] == 'd') {
      if (text[i] < '0' || text[i] > '9') return bad();
    } else if (text[i] != kShape[i]) {
      return bad();
    }
  }
  auto num = [&](size_t pos, size_t len) {
    int64_t v = 0;
    for (size_t i = pos; i < pos + len; ++i) v = v * 10 + (text[i] - '0');
    return v;
  };
  const int64_t y = num(0, 4), mo = num(5, 2), d = num(8, 2);
  const int64_t hh = num(11, 2), mi = num(14, 2), ss = num(17, 2), ms = num(20, 3);
  if (mo < 1 || mo > 12 || d < 1 || hh > 23 || mi > 59 || ss > 59) return bad();
  static constexpr int kDaysInMonth[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > kDaysInMonth[mo - 1] || (mo == 2 && d == 29 && !leap)) return bad();
  return DaysFromCivil(y, mo, d) * kMsPerDay + hh * 3'600'000 + mi * 60'000 + ss * 1000 + ms;
}

}  // namespace sluice::stream
