#include "engine/spark_datetime.h"

#include <string>
#include <vector>

#include "duckdb/common/types/date.hpp"
#include "duckdb/common/types/time.hpp"
#include "duckdb/common/types/timestamp.hpp"
#include "duckdb/common/vector_operations/binary_executor.hpp"
#include "duckdb/common/vector_operations/unary_executor.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/planner/expression/bound_function_expression.hpp"
#include "engine/spark_macros.h"

namespace sluice::engine::internal {
namespace {

// One piece of a Spark datetime pattern: a run of `count` equal letters, or literal text.
struct Piece {
  char letter = 0;  // 0: literal
  int count = 0;
  std::string text;
};

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::vector<Piece> ParsePattern(std::string_view fn, std::string_view p) {
  std::vector<Piece> out;
  auto literal = [&](std::string_view s) {
    if (out.empty() || out.back().letter != 0) out.push_back(Piece{});
    out.back().text.append(s);
  };
  for (size_t i = 0; i < p.size();) {
    const char c = p[i];
    if (c == '\'') {
      if (i + 1 < p.size() && p[i + 1] == '\'') {  // '' is a quote
        literal("'");
        i += 2;
        continue;
      }
      std::string text;
      size_t j = i + 1;
      for (;; ++j) {
        if (j >= p.size()) {
          throw duckdb::InvalidInputException("%s: the pattern '%s' has an unterminated quote",
                                              std::string(fn), std::string(p));
        }
        if (p[j] == '\'') {
          if (j + 1 < p.size() && p[j + 1] == '\'') {
            text += '\'';
            ++j;
            continue;
          }
          break;
        }
        text += p[j];
      }
      literal(text);
      i = j + 1;
      continue;
    }
    if (IsAsciiLetter(c)) {
      size_t j = i;
      while (j < p.size() && p[j] == c) ++j;
      out.push_back(Piece{c, static_cast<int>(j - i), {}});
      i = j;
      continue;
    }
    if (c == '[' || c == ']' || c == '{' || c == '}' || c == '#') {
      throw duckdb::InvalidInputException(
          "%s: the pattern '%s' uses '%c' (optional sections and reserved characters are not "
          "supported)",
          std::string(fn), std::string(p), c);
    }
    literal(std::string_view(&p[i], 1));
    ++i;
  }
  return out;
}

[[noreturn]] void Unsupported(std::string_view fn, std::string_view pattern, const Piece& piece) {
  const std::string letters(piece.count, piece.letter);
  const char* why = std::string_view("YwWuecF").find(piece.letter) != std::string_view::npos
                        ? " (Spark refuses week-based patterns)"
                        : "";
  throw duckdb::InvalidInputException("%s: the pattern letters '%s' of '%s' are not supported%s",
                                      std::string(fn), letters, std::string(pattern), why);
}

std::string Pad(int64_t v, int width) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  if (static_cast<int>(digits.size()) < width) digits.insert(0, width - digits.size(), '0');
  return v < 0 ? "-" + digits : digits;
}

const char* const kMonths[] = {"January",   "February", "March",    "April",
                               "May",       "June",     "July",     "August",
                               "September", "October",  "November", "December"};
const char* const kDays[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                             "Friday", "Saturday", "Sunday"};  // ISO order: 1 = Monday

std::string Name(const char* full, int count) {
  const std::string s(full);
  if (count <= 3) return s.substr(0, 3);
  if (count == 4) return s;
  return s.substr(0, 1);
}

std::string Quarter(int q, int count) {
  static const char* const kOrdinal[] = {"1st", "2nd", "3rd", "4th"};
  if (count <= 2) return Pad(q, count);
  if (count == 3) return "Q" + std::to_string(q);
  return std::string(kOrdinal[q - 1]) + " quarter";
}

// The UTC zone as Spark prints it for each zone letter and count.
std::string UtcZone(const Piece& piece) {
  switch (piece.letter) {
    case 'X':
      return "Z";
    case 'x':
      return piece.count == 1 ? "+00" : (piece.count == 3 || piece.count == 5) ? "+00:00" : "+0000";
    case 'Z':
      return piece.count <= 3 ? "+0000" : piece.count == 4 ? "GMT" : "Z";
    case 'z':
      return piece.count <= 3 ? "UTC" : "Coordinated Universal Time";
    case 'V':
      return "UTC";
    default:  // 'O'
      return "GMT";
  }
}

std::string Format(std::string_view pattern, const std::vector<Piece>& pieces,
                   duckdb::timestamp_t ts, bool utc) {
  if (!duckdb::Timestamp::IsFinite(ts)) {
    throw duckdb::InvalidInputException("date_format: the timestamp is infinite");
  }
  duckdb::date_t date;
  duckdb::dtime_t time;
  duckdb::Timestamp::Convert(ts, date, time);
  int32_t y, mo, d, h, mi, s, us;
  duckdb::Date::Convert(date, y, mo, d);
  duckdb::Time::Convert(time, h, mi, s, us);
  std::string out;
  for (const Piece& piece : pieces) {
    const int n = piece.count;
    switch (piece.letter) {
      case 0:
        out += piece.text;
        break;
      case 'G':
        out += n <= 3   ? (y > 0 ? "AD" : "BC")
               : n == 4 ? (y > 0 ? "Anno Domini" : "Before Christ")
                        : (y > 0 ? "A" : "B");
        break;
      case 'y': {
        const int year = y > 0 ? y : 1 - y;  // year of era
        out += n == 2 ? Pad(year % 100, 2) : Pad(year, n);
        break;
      }
      case 'M':
      case 'L':
        out += n <= 2 ? Pad(mo, n) : Name(kMonths[mo - 1], n);
        break;
      case 'd':
        out += Pad(d, n);
        break;
      case 'D':
        out += Pad(duckdb::Date::ExtractDayOfTheYear(date), n);
        break;
      case 'Q':
      case 'q':
        out += Quarter((mo - 1) / 3 + 1, n);
        break;
      case 'E':
        out += Name(kDays[duckdb::Date::ExtractISODayOfTheWeek(date) - 1], n);
        break;
      case 'a':
        out += h < 12 ? "AM" : "PM";
        break;
      case 'h':
        out += Pad(h % 12 == 0 ? 12 : h % 12, n);
        break;
      case 'K':
        out += Pad(h % 12, n);
        break;
      case 'k':
        out += Pad(h == 0 ? 24 : h, n);
        break;
      case 'H':
        out += Pad(h, n);
        break;
      case 'm':
        out += Pad(mi, n);
        break;
      case 's':
        out += Pad(s, n);
        break;
      case 'S': {
        std::string fraction = Pad(us, 6);
        if (n <= 6) {
          fraction.resize(n);
        } else {
          fraction.append(n - 6, '0');
        }
        out += fraction;
        break;
      }
      case 'X':
      case 'x':
      case 'Z':
      case 'z':
      case 'V':
      case 'O':
        if (!utc) {
          throw duckdb::InvalidInputException(
              "date_format: the zone letters '%s' of '%s' need the session time zone UTC (Sluice's "
              "TIMESTAMP carries no zone); format the offset yourself or SET TimeZone = 'UTC'",
              std::string(n, piece.letter), std::string(pattern));
        }
        out += UtcZone(piece);
        break;
      default:
        Unsupported("date_format", pattern, piece);
    }
  }
  return out;
}

struct FormatData : public duckdb::FunctionData {
  explicit FormatData(bool utc_p) : utc(utc_p) {}
  bool utc;
  duckdb::unique_ptr<duckdb::FunctionData> Copy() const override {
    return duckdb::make_uniq<FormatData>(utc);
  }
  bool Equals(const duckdb::FunctionData& other) const override {
    return other.Cast<FormatData>().utc == utc;
  }
};

duckdb::unique_ptr<duckdb::FunctionData> BindFormat(
    duckdb::ClientContext& context, duckdb::ScalarFunction&,
    duckdb::vector<duckdb::unique_ptr<duckdb::Expression>>&) {
  duckdb::Value zone;
  bool utc = true;
  if (context.TryGetCurrentSetting("TimeZone", zone) && !zone.IsNull()) {
    const std::string z = zone.ToString();
    utc = z == "UTC" || z == "Etc/UTC" || z == "GMT" || z == "Etc/GMT";
  }
  return duckdb::make_uniq<FormatData>(utc);
}

void DateFormat(duckdb::DataChunk& args, duckdb::ExpressionState& state, duckdb::Vector& result) {
  const auto& data =
      state.expr.Cast<duckdb::BoundFunctionExpression>().bind_info->Cast<FormatData>();
  std::string last;
  std::vector<Piece> pieces;
  bool parsed = false;
  duckdb::BinaryExecutor::Execute<duckdb::timestamp_t, duckdb::string_t, duckdb::string_t>(
      args.data[0], args.data[1], result, args.size(),
      [&](duckdb::timestamp_t ts, duckdb::string_t p) {
        const std::string pattern = p.GetString();
        if (!parsed || pattern != last) {
          pieces = ParsePattern("date_format", pattern);
          last = pattern;
          parsed = true;
        }
        return duckdb::StringVector::AddString(result, Format(pattern, pieces, ts, data.utc));
      });
}

void StrptimeFormat(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::UnaryExecutor::Execute<duckdb::string_t, duckdb::string_t>(
      args.data[0], result, args.size(), [&](duckdb::string_t p) {
        return duckdb::StringVector::AddString(result, SparkPatternToStrptime(p.GetString()));
      });
}

// Spark's datetime functions over DuckDB's. Spark's TIMESTAMP is an instant: the results are
// TIMESTAMP WITH TIME ZONE where DuckDB's own functions give one, and text is read in the session
// time zone. Helpers (spark_as_date, spark_trunc_unit, ...) are used by the others.
const duckdb::DefaultMacro kMacros[] = {
    // window(ts, size[, slide[, start]]) of a batch query (the dialect writes spark_window): the
    // tumbling window holding ts, {start, end}, its start at start + k * size. Months are
    // refused as Spark refuses them; a slide other than the size is refused (each row would
    // fall in several windows, which Spark's batch queries expand and a scalar cannot).
    {DEFAULT_SCHEMA,
     "spark_interval_micros",
     {"i", nullptr},
     {{nullptr, nullptr}},
     "CAST(epoch(CAST(i AS INTERVAL)) * 1000000 AS BIGINT)"},
    {DEFAULT_SCHEMA,
     "spark_window",
     {"ts", "size", nullptr},
     {{nullptr, nullptr}},
     "spark_window(ts, size, size, '0 seconds')"},
    {DEFAULT_SCHEMA,
     "spark_window",
     {"ts", "size", "slide", nullptr},
     {{nullptr, nullptr}},
     "spark_window(ts, size, slide, '0 seconds')"},
    {DEFAULT_SCHEMA,
     "spark_window",
     {"ts", "size", "slide", "st", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN datepart('year', CAST(size AS INTERVAL)) * 12 + datepart('month', CAST(size AS "
     "INTERVAL)) <> 0 THEN error('Intervals greater than a month is not supported (' || "
     "CAST(size AS VARCHAR) || '): the duration of window() is fixed, write it in days or weeks, "
     "e.g. ''30 days''') WHEN spark_interval_micros(size) <= 0 THEN error('The window duration (' "
     "|| CAST(size AS VARCHAR) || ') must be greater than 0') WHEN spark_interval_micros(slide) <> "
     "spark_interval_micros(size) THEN error('window(ts, ''' || CAST(size AS VARCHAR) || ''', '''"
     " || CAST(slide AS VARCHAR) || '''): a sliding window (a slide other than the duration) is "
     "not supported in a batch query, where a row falls in several windows; a streaming table "
     "takes it') WHEN ts IS NULL THEN NULL ELSE {'start': ts - to_microseconds((((epoch_us(ts) - "
     "spark_interval_micros(st)) % spark_interval_micros(size)) + spark_interval_micros(size)) % "
     "spark_interval_micros(size)), 'end': ts - to_microseconds((((epoch_us(ts) - "
     "spark_interval_micros(st)) % spark_interval_micros(size)) + spark_interval_micros(size)) % "
     "spark_interval_micros(size)) + to_microseconds(spark_interval_micros(size))} END"},
    {DEFAULT_SCHEMA,
     "date_format",
     {"x", "p", nullptr},
     {{nullptr, nullptr}},
     "spark_date_format(CAST(x AS TIMESTAMP), p)"},
    {DEFAULT_SCHEMA,
     "spark_as_date",
     {"x", nullptr},
     {{nullptr, nullptr}},
     "CAST(CAST(x AS TIMESTAMPTZ) AS DATE)"},
    {DEFAULT_SCHEMA,
     "spark_to_timestamp",
     {"x", nullptr},
     {{nullptr, nullptr}},
     "CAST(spark_cast_input(x, 'TIMESTAMP') AS TIMESTAMPTZ)"},
    {DEFAULT_SCHEMA,
     "spark_to_timestamp",
     {"x", "p", nullptr},
     {{nullptr, nullptr}},
     "CAST(strptime(CAST(x AS VARCHAR), spark_strptime_format(p)) AS TIMESTAMPTZ)"},
    {DEFAULT_SCHEMA,
     "try_to_timestamp",
     {"x", nullptr},
     {{nullptr, nullptr}},
     "TRY_CAST(spark_try_cast_input(x, 'TIMESTAMP') AS TIMESTAMPTZ)"},
    {DEFAULT_SCHEMA,
     "try_to_timestamp",
     {"x", "p", nullptr},
     {{nullptr, nullptr}},
     "try_strptime(CAST(x AS VARCHAR), spark_strptime_format(p))"},
    {DEFAULT_SCHEMA, "to_date", {"x", nullptr}, {{nullptr, nullptr}}, "spark_as_date(x)"},
    {DEFAULT_SCHEMA,
     "to_date",
     {"x", "p", nullptr},
     {{nullptr, nullptr}},
     "CAST(strptime(CAST(x AS VARCHAR), spark_strptime_format(p)) AS DATE)"},
    {DEFAULT_SCHEMA,
     "spark_floor_div",
     {"a", "b", nullptr},
     {{nullptr, nullptr}},
     "(a - ((a % b + b) % b)) // b"},
    {DEFAULT_SCHEMA,
     "unix_seconds",
     {"t", nullptr},
     {{nullptr, nullptr}},
     "spark_floor_div(epoch_us(t), 1000000)"},
    {DEFAULT_SCHEMA,
     "unix_millis",
     {"t", nullptr},
     {{nullptr, nullptr}},
     "spark_floor_div(epoch_us(t), 1000)"},
    {DEFAULT_SCHEMA, "unix_micros", {"t", nullptr}, {{nullptr, nullptr}}, "epoch_us(t)"},
    {DEFAULT_SCHEMA,
     "unix_timestamp",
     {nullptr},
     {{nullptr, nullptr}},
     "unix_seconds(get_current_timestamp())"},
    {DEFAULT_SCHEMA,
     "unix_timestamp",
     {"x", nullptr},
     {{nullptr, nullptr}},
     "unix_seconds(CAST(x AS TIMESTAMPTZ))"},
    {DEFAULT_SCHEMA,
     "unix_timestamp",
     {"x", "p", nullptr},
     {{nullptr, nullptr}},
     "unix_seconds(CAST(strptime(CAST(x AS VARCHAR), spark_strptime_format(p)) AS TIMESTAMPTZ))"},
    {DEFAULT_SCHEMA,
     "to_unix_timestamp",
     {"x", nullptr},
     {{nullptr, nullptr}},
     "unix_timestamp(x)"},
    {DEFAULT_SCHEMA,
     "to_unix_timestamp",
     {"x", "p", nullptr},
     {{nullptr, nullptr}},
     "unix_timestamp(x, p)"},
    {DEFAULT_SCHEMA,
     "from_unixtime",
     {"n", nullptr},
     {{nullptr, nullptr}},
     "date_format(timestamp_seconds(CAST(n AS BIGINT)), 'yyyy-MM-dd HH:mm:ss')"},
    {DEFAULT_SCHEMA,
     "from_unixtime",
     {"n", "p", nullptr},
     {{nullptr, nullptr}},
     "date_format(timestamp_seconds(CAST(n AS BIGINT)), p)"},
    {DEFAULT_SCHEMA,
     "timestamp_seconds",
     {"n", nullptr},
     {{nullptr, nullptr}},
     "TIMESTAMPTZ '1970-01-01 00:00:00+00' + to_microseconds(CAST(trunc(CAST(n AS "
     "DECIMAL(38,6)) * 1000000) AS BIGINT))"},
    {DEFAULT_SCHEMA,
     "timestamp_millis",
     {"n", nullptr},
     {{nullptr, nullptr}},
     "TIMESTAMPTZ '1970-01-01 00:00:00+00' + to_microseconds(CAST(n AS BIGINT) * 1000)"},
    {DEFAULT_SCHEMA,
     "timestamp_micros",
     {"n", nullptr},
     {{nullptr, nullptr}},
     "TIMESTAMPTZ '1970-01-01 00:00:00+00' + to_microseconds(CAST(n AS BIGINT))"},
    {DEFAULT_SCHEMA,
     "unix_date",
     {"d", nullptr},
     {{nullptr, nullptr}},
     "CAST(CAST(d AS DATE) - DATE '1970-01-01' AS INTEGER)"},
    {DEFAULT_SCHEMA,
     "date_from_unix_date",
     {"n", nullptr},
     {{nullptr, nullptr}},
     "DATE '1970-01-01' + CAST(n AS INTEGER)"},
    {DEFAULT_SCHEMA,
     "spark_trunc_unit",
     {"u", nullptr},
     {{nullptr, nullptr}},
     "CASE lower(u) WHEN 'yyyy' THEN 'year' WHEN 'yy' THEN 'year' WHEN 'mm' THEN 'month' WHEN "
     "'mon' THEN 'month' WHEN 'dd' THEN 'day' ELSE lower(u) END"},
    {DEFAULT_SCHEMA,
     "spark_date_trunc",
     {"u", "t", nullptr},
     {{nullptr, nullptr}},
     "CAST(date_trunc(spark_trunc_unit(u), CAST(t AS TIMESTAMP)) AS TIMESTAMPTZ)"},
    {DEFAULT_SCHEMA,
     "spark_trunc",
     {"d", "u", nullptr},
     {{nullptr, nullptr}},
     "CAST(date_trunc(spark_trunc_unit(u), spark_as_date(d)) AS DATE)"},
    {DEFAULT_SCHEMA,
     "spark_datediff",
     {"a", "b", nullptr},
     {{nullptr, nullptr}},
     "CAST(spark_as_date(a) - spark_as_date(b) AS INTEGER)"},
    {DEFAULT_SCHEMA,
     "spark_date_sub",
     {"d", "n", nullptr},
     {{nullptr, nullptr}},
     "spark_as_date(d) - CAST(n AS INTEGER)"},
    {DEFAULT_SCHEMA,
     "add_months",
     {"d", "n", nullptr},
     {{nullptr, nullptr}},
     "CAST(spark_as_date(d) + to_months(CAST(n AS INTEGER)) AS DATE)"},
    {DEFAULT_SCHEMA,
     "spark_months_between",
     {"a", "b", "r", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN day(a) = day(b) OR (day(a) = day(last_day(a)) AND day(b) = day(last_day(b))) "
     "THEN CAST((year(a) - year(b)) * 12 + month(a) - month(b) AS DOUBLE) "
     "WHEN r THEN round(((year(a) - year(b)) * 12 + month(a) - month(b)) + ((day(a) - day(b)) * "
     "86400000000 + (epoch_us(a) - epoch_us(date_trunc('day', a))) - (epoch_us(b) - "
     "epoch_us(date_trunc('day', b)))) / 2678400000000.0, 8) "
     "ELSE ((year(a) - year(b)) * 12 + month(a) - month(b)) + ((day(a) - day(b)) * 86400000000 + "
     "(epoch_us(a) - epoch_us(date_trunc('day', a))) - (epoch_us(b) - epoch_us(date_trunc('day', "
     "b)))) / 2678400000000.0 END"},
    {DEFAULT_SCHEMA,
     "months_between",
     {"a", "b", nullptr},
     {{nullptr, nullptr}},
     "spark_months_between(CAST(a AS TIMESTAMP), CAST(b AS TIMESTAMP), true)"},
    {DEFAULT_SCHEMA,
     "months_between",
     {"a", "b", "r", nullptr},
     {{nullptr, nullptr}},
     "spark_months_between(CAST(a AS TIMESTAMP), CAST(b AS TIMESTAMP), r)"},
    {DEFAULT_SCHEMA,
     "spark_day_of_week_number",
     {"s", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN s IS NULL THEN NULL WHEN upper(s) IN ('MO', 'MON', 'MONDAY') THEN 1 "
     "WHEN upper(s) IN ('TU', 'TUE', 'TUESDAY') THEN 2 WHEN upper(s) IN ('WE', 'WED', "
     "'WEDNESDAY') THEN 3 WHEN upper(s) IN ('TH', 'THU', 'THURSDAY') THEN 4 WHEN upper(s) IN "
     "('FR', 'FRI', 'FRIDAY') THEN 5 WHEN upper(s) IN ('SA', 'SAT', 'SATURDAY') THEN 6 WHEN "
     "upper(s) IN ('SU', 'SUN', 'SUNDAY') THEN 7 ELSE error('next_day: ''' || s || ''' is not a "
     "day of the week (ILLEGAL_DAY_OF_WEEK)') END"},
    {DEFAULT_SCHEMA,
     "next_day",
     {"d", "w", nullptr},
     {{nullptr, nullptr}},
     "spark_as_date(d) + CAST((spark_day_of_week_number(w) - isodow(spark_as_date(d)) + 6) % 7 + "
     "1 AS INTEGER)"},
    {DEFAULT_SCHEMA,
     "spark_dayofweek",
     {"d", nullptr},
     {{nullptr, nullptr}},
     "CAST(dayofweek(spark_as_date(d)) + 1 AS INTEGER)"},
    {DEFAULT_SCHEMA,
     "spark_weekday",
     {"d", nullptr},
     {{nullptr, nullptr}},
     "CAST(isodow(spark_as_date(d)) - 1 AS INTEGER)"},
    {DEFAULT_SCHEMA,
     "from_utc_timestamp",
     {"t", "z", nullptr},
     {{nullptr, nullptr}},
     "timezone(z, timezone('UTC', CAST(t AS TIMESTAMP)))"},
    {DEFAULT_SCHEMA,
     "to_utc_timestamp",
     {"t", "z", nullptr},
     {{nullptr, nullptr}},
     "timezone('UTC', timezone(z, CAST(t AS TIMESTAMP)))"},
    {DEFAULT_SCHEMA,
     "spark_timestampadd",
     {"u", "n", "t", nullptr},
     {{nullptr, nullptr}},
     "CAST(t AS TIMESTAMPTZ) + CASE lower(u) WHEN 'year' THEN to_years(CAST(n AS INTEGER)) WHEN "
     "'quarter' THEN to_months(CAST(n AS INTEGER) * 3) WHEN 'month' THEN to_months(CAST(n AS "
     "INTEGER)) WHEN 'week' THEN to_days(CAST(n AS INTEGER) * 7) WHEN 'day' THEN to_days(CAST(n "
     "AS INTEGER)) WHEN 'dayofyear' THEN to_days(CAST(n AS INTEGER)) WHEN 'hour' THEN "
     "to_hours(CAST(n AS BIGINT)) WHEN 'minute' THEN to_minutes(CAST(n AS BIGINT)) WHEN 'second' "
     "THEN to_microseconds(CAST(n AS BIGINT) * 1000000) WHEN 'millisecond' THEN "
     "to_milliseconds(CAST(n AS BIGINT)) WHEN 'microsecond' THEN to_microseconds(CAST(n AS "
     "BIGINT)) ELSE error('timestampadd: unknown unit ' || u) END"},
    {DEFAULT_SCHEMA,
     "spark_timestampdiff",
     {"u", "a", "b", nullptr},
     {{nullptr, nullptr}},
     "date_sub(CASE lower(u) WHEN 'dayofyear' THEN 'day' ELSE lower(u) END, CAST(a AS "
     "TIMESTAMPTZ), CAST(b AS TIMESTAMPTZ))"},
    {DEFAULT_SCHEMA,
     "spark_second_with_fraction",
     {"t", nullptr},
     {{nullptr, nullptr}},
     "CAST(CAST(microsecond(t) AS DECIMAL(8, 0)) / 1000000 AS DECIMAL(8, 6))"},
    {DEFAULT_SCHEMA,
     "current_timestamp",
     {nullptr},
     {{nullptr, nullptr}},
     "get_current_timestamp()"},
};

}  // namespace

std::string SparkPatternToStrptime(std::string_view pattern) {
  std::string out;
  for (const Piece& piece : ParsePattern("to_timestamp", pattern)) {
    const int n = piece.count;
    switch (piece.letter) {
      case 0:
        for (char c : piece.text) out += c == '%' ? std::string("%%") : std::string(1, c);
        break;
      case 'y':
        out += n == 2 ? "%y" : "%Y";
        break;
      case 'M':
      case 'L':
        out += n <= 2 ? "%m" : n == 3 ? "%b" : "%B";
        break;
      case 'd':
        out += "%d";
        break;
      case 'D':
        out += "%j";
        break;
      case 'H':
        out += "%H";
        break;
      case 'h':
        out += "%I";
        break;
      case 'm':
        out += "%M";
        break;
      case 's':
        out += "%S";
        break;
      case 'S':
        out += n <= 3 ? "%g" : n <= 6 ? "%f" : "%n";
        break;
      case 'a':
        out += "%p";
        break;
      case 'E':
        out += n <= 3 ? "%a" : "%A";
        break;
      case 'X':
      case 'x':
      case 'Z':
        out += "%z";
        break;
      case 'z':
        out += "%Z";
        break;
      default:
        Unsupported("to_timestamp", pattern, piece);
    }
  }
  return out;
}

void RegisterSparkDatetime(duckdb::ExtensionLoader& loader) {
  duckdb::ScalarFunction format("spark_date_format",
                                {duckdb::LogicalType::TIMESTAMP, duckdb::LogicalType::VARCHAR},
                                duckdb::LogicalType::VARCHAR, DateFormat, BindFormat);
  duckdb::ScalarFunction strptime_format("spark_strptime_format", {duckdb::LogicalType::VARCHAR},
                                         duckdb::LogicalType::VARCHAR, StrptimeFormat);
  loader.RegisterFunction(format);
  loader.RegisterFunction(strptime_format);
  RegisterMacros(loader, kMacros);
}

}  // namespace sluice::engine::internal
