#include "engine/spark_casts.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/strings.h"
#include "duckdb/common/exception/conversion_exception.hpp"
#include "duckdb/common/types/date.hpp"
#include "duckdb/common/types/time.hpp"
#include "duckdb/common/types/timestamp.hpp"
#include "duckdb/common/vector_operations/generic_executor.hpp"
#include "duckdb/common/vector_operations/ternary_executor.hpp"
#include "duckdb/common/vector_operations/unary_executor.hpp"
#include "duckdb/execution/expression_executor.hpp"
#include "duckdb/function/function_binder.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/planner/expression/bound_cast_expression.hpp"
#include "duckdb/planner/expression/bound_constant_expression.hpp"
#include "duckdb/planner/expression/bound_function_expression.hpp"

namespace sluice::engine::internal {
namespace {

using duckdb::Expression;
using duckdb::LogicalType;
using duckdb::LogicalTypeId;
using duckdb::unique_ptr;

// ---------------------------------------------------------------------------------------------
// Java's text of a floating-point number: the shortest digits that read back, in plain notation
// for 1e-3 <= |v| < 1e7 (with at least one digit after the point), else d.dddE<exponent>.

std::string JavaText(const char* sci, size_t n, double magnitude) {
  std::string s(sci, n);  // [-]d[.ddd]e[+-]xx
  const bool negative = s[0] == '-';
  const size_t e = s.find('e');
  std::string digits;
  for (size_t i = negative ? 1 : 0; i < e; ++i) {
    if (s[i] != '.') digits += s[i];
  }
  const int exp = std::stoi(s.substr(e + 1));
  std::string out = negative ? "-" : "";
  if (magnitude >= 1e-3 && magnitude < 1e7) {
    if (exp >= 0) {
      const size_t int_len = static_cast<size_t>(exp) + 1;
      if (digits.size() <= int_len) {
        out += digits + std::string(int_len - digits.size(), '0') + ".0";
      } else {
        out += digits.substr(0, int_len) + "." + digits.substr(int_len);
      }
    } else {
      out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    }
  } else {
    out += digits.substr(0, 1) + "." + (digits.size() > 1 ? digits.substr(1) : "0") + "E" +
           std::to_string(exp);
  }
  return out;
}

template <typename T>
std::string FloatingText(T v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  return JavaText(buf, static_cast<size_t>(r.ptr - buf), std::fabs(static_cast<double>(v)));
}

// ---------------------------------------------------------------------------------------------
// Spark's text forms of dates and times.

// Java's trim: characters <= ' ' at both ends.
std::string_view Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && static_cast<unsigned char>(s[b]) <= ' ') ++b;
  while (e > b && static_cast<unsigned char>(s[e - 1]) <= ' ') --e;
  return s.substr(b, e - b);
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads min..max digits at s[*i]: false when there are fewer than min or more than max.
bool Digits(std::string_view s, size_t* i, size_t min, size_t max, int64_t* out) {
  size_t j = *i;
  int64_t v = 0;
  while (j < s.size() && IsDigit(s[j])) {
    if (j - *i >= max) return false;
    v = v * 10 + (s[j] - '0');
    ++j;
  }
  if (j - *i < min) return false;
  *out = v;
  *i = j;
  return true;
}

// The date at the start of s: [+-]yyyy[-[m]m[-[d]d]]. *i is left after it.
bool ParseDatePart(std::string_view s, size_t* i, duckdb::date_t* out) {
  size_t k = *i;
  bool negative = false;
  if (k < s.size() && (s[k] == '+' || s[k] == '-')) {
    negative = s[k] == '-';
    ++k;
  }
  int64_t year = 0, month = 1, day = 1;
  if (!Digits(s, &k, 4, 7, &year)) return false;
  if (k < s.size() && s[k] == '-') {
    ++k;
    if (!Digits(s, &k, 1, 2, &month)) return false;
    if (k < s.size() && s[k] == '-') {
      ++k;
      if (!Digits(s, &k, 1, 2, &day)) return false;
    }
  }
  const auto y = static_cast<int32_t>(negative ? -year : year);
  if (!duckdb::Date::IsValid(y, static_cast<int32_t>(month), static_cast<int32_t>(day))) {
    return false;
  }
  *out = duckdb::Date::FromDate(y, static_cast<int32_t>(month), static_cast<int32_t>(day));
  *i = k;
  return true;
}

// A zone offset in seconds: Z, UTC, UT, GMT, each optionally followed by +h, +hh, +hh:mm,
// +hhmm, +hh:mm:ss; or the offset alone. `region` is set for a name such as Europe/Paris.
bool ParseZone(std::string_view z, int64_t* offset_s, bool* region) {
  *region = false;
  *offset_s = 0;
  size_t i = 0;
  if (z == "Z") return true;
  for (std::string_view prefix : {"UTC", "GMT", "UT"}) {
    if (z.substr(0, prefix.size()) == prefix) {
      i = prefix.size();
      break;
    }
  }
  if (i == z.size()) return true;
  if (z[i] != '+' && z[i] != '-') {
    *region = true;
    return false;
  }
  const int sign = z[i] == '-' ? -1 : 1;
  ++i;
  int64_t h = 0, m = 0, s = 0;
  if (!Digits(z, &i, 1, 2, &h)) return false;
  if (i < z.size()) {
    if (z[i] == ':') ++i;
    if (!Digits(z, &i, 2, 2, &m)) return false;
    if (i < z.size()) {
      if (z[i] == ':') ++i;
      if (!Digits(z, &i, 2, 2, &s)) return false;
    }
  }
  if (i != z.size() || h > 18 || m > 59 || s > 59) return false;
  *offset_s = sign * (h * 3600 + m * 60 + s);
  return true;
}

enum class TextResult { kOk, kMalformed, kZoneNeedsUtc, kRegionZone };

TextResult ParseSparkDate(std::string_view text, duckdb::date_t* out) {
  std::string_view s = Trim(text);
  size_t i = 0;
  if (!ParseDatePart(s, &i, out)) return TextResult::kMalformed;
  if (i == s.size() || s[i] == ' ' || s[i] == 'T') return TextResult::kOk;
  return TextResult::kMalformed;
}

TextResult ParseSparkTimestamp(std::string_view text, bool utc, duckdb::timestamp_t* out) {
  std::string_view s = Trim(text);
  size_t i = 0;
  duckdb::date_t date;
  if (!ParseDatePart(s, &i, &date)) return TextResult::kMalformed;
  int64_t h = 0, m = 0, sec = 0, micros = 0;
  if (i < s.size()) {
    if (s[i] != ' ' && s[i] != 'T') return TextResult::kMalformed;
    ++i;
    if (i < s.size() && IsDigit(s[i])) {
      if (!Digits(s, &i, 1, 2, &h)) return TextResult::kMalformed;
      if (i < s.size() && s[i] == ':') {
        ++i;
        if (!Digits(s, &i, 1, 2, &m)) return TextResult::kMalformed;
        if (i < s.size() && s[i] == ':') {
          ++i;
          if (!Digits(s, &i, 1, 2, &sec)) return TextResult::kMalformed;
          if (i < s.size() && s[i] == '.') {
            ++i;
            size_t n = 0;
            while (i < s.size() && IsDigit(s[i])) {
              if (n < 6) micros = micros * 10 + (s[i] - '0');
              ++n;
              ++i;
            }
            if (n == 0 || n > 9) return TextResult::kMalformed;
            for (; n < 6; ++n) micros *= 10;
          }
        }
      }
    }
  }
  if (h > 23 || m > 59 || sec > 59) return TextResult::kMalformed;
  int64_t offset_s = 0;
  std::string_view zone = Trim(s.substr(i));
  if (!zone.empty()) {
    bool region = false;
    if (!ParseZone(zone, &offset_s, &region)) {
      return region ? TextResult::kRegionZone : TextResult::kMalformed;
    }
    if (!utc) return TextResult::kZoneNeedsUtc;
  }
  duckdb::timestamp_t ts;
  if (!duckdb::Timestamp::TryFromDatetime(
          date,
          duckdb::Time::FromTime(static_cast<int32_t>(h), static_cast<int32_t>(m),
                                 static_cast<int32_t>(sec), static_cast<int32_t>(micros)),
          ts)) {
    return TextResult::kMalformed;
  }
  *out = duckdb::timestamp_t(ts.value - offset_s * 1000000);
  return TextResult::kOk;
}

// ---------------------------------------------------------------------------------------------
// The per-row functions spark_cast_input becomes.

struct CastData : public duckdb::FunctionData {
  CastData(bool is_try_p, bool utc_p, std::string target_p)
      : is_try(is_try_p), utc(utc_p), target(std::move(target_p)) {}
  bool is_try;
  bool utc;
  std::string target;
  unique_ptr<duckdb::FunctionData> Copy() const override {
    return duckdb::make_uniq<CastData>(is_try, utc, target);
  }
  bool Equals(const duckdb::FunctionData& other) const override {
    const auto& o = other.Cast<CastData>();
    return o.is_try == is_try && o.utc == utc && o.target == target;
  }
};

const CastData& DataOf(duckdb::ExpressionState& state) {
  return state.expr.Cast<duckdb::BoundFunctionExpression>().bind_info->Cast<CastData>();
}

[[noreturn]] void Malformed(const std::string& value, const std::string& target,
                            const char* why = "it is malformed") {
  throw duckdb::ConversionException(
      "[CAST_INVALID_INPUT] The value '%s' of the type \"STRING\" cannot be cast to \"%s\" because "
      "%s. Correct the value as per Spark's syntax, or use try_cast to get NULL instead",
      value, target, why);
}

// STRING -> integral: Spark's [+-]digits, trimmed; the text goes on to DuckDB's cast.
void IntegralText(duckdb::DataChunk& args, duckdb::ExpressionState& state, duckdb::Vector& result) {
  const CastData& data = DataOf(state);
  duckdb::UnaryExecutor::ExecuteWithNulls<duckdb::string_t, duckdb::string_t>(
      args.data[0], result, args.size(),
      [&](duckdb::string_t in, duckdb::ValidityMask& mask, duckdb::idx_t row) {
        const std::string text = in.GetString();
        std::string_view s = Trim(text);
        size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
        bool ok = i < s.size();
        for (; ok && i < s.size(); ++i) ok = IsDigit(s[i]);
        if (!ok) {
          if (!data.is_try) Malformed(text, data.target);
          mask.SetInvalid(row);
          return duckdb::string_t();
        }
        return duckdb::StringVector::AddString(result, s.data(), s.size());
      });
}

// STRING -> DOUBLE / FLOAT: Java's suffixes d, D, f, F dropped.
void FloatingTextFn(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::UnaryExecutor::Execute<duckdb::string_t, duckdb::string_t>(
      args.data[0], result, args.size(), [&](duckdb::string_t in) {
        const std::string text = in.GetString();
        std::string_view s = Trim(text);
        if (s.size() >= 2 && std::string_view("dDfF").find(s.back()) != std::string_view::npos &&
            (IsDigit(s[s.size() - 2]) || s[s.size() - 2] == '.')) {
          s.remove_suffix(1);
        }
        return duckdb::StringVector::AddString(result, s.data(), s.size());
      });
}

void DateText(duckdb::DataChunk& args, duckdb::ExpressionState& state, duckdb::Vector& result) {
  const CastData& data = DataOf(state);
  duckdb::UnaryExecutor::ExecuteWithNulls<duckdb::string_t, duckdb::date_t>(
      args.data[0], result, args.size(),
      [&](duckdb::string_t in, duckdb::ValidityMask& mask, duckdb::idx_t row) {
        duckdb::date_t d;
        if (ParseSparkDate(in.GetString(), &d) == TextResult::kOk) return d;
        if (!data.is_try) Malformed(in.GetString(), "DATE");
        mask.SetInvalid(row);
        return duckdb::date_t();
      });
}

void TimestampText(duckdb::DataChunk& args, duckdb::ExpressionState& state,
                   duckdb::Vector& result) {
  const CastData& data = DataOf(state);
  duckdb::UnaryExecutor::ExecuteWithNulls<duckdb::string_t, duckdb::timestamp_t>(
      args.data[0], result, args.size(),
      [&](duckdb::string_t in, duckdb::ValidityMask& mask, duckdb::idx_t row) {
        duckdb::timestamp_t ts;
        const TextResult r = ParseSparkTimestamp(in.GetString(), data.utc, &ts);
        if (r == TextResult::kOk) return ts;
        if (r == TextResult::kZoneNeedsUtc) {
          throw duckdb::ConversionException(
              "CAST('%s' AS TIMESTAMP): a zone in the text needs the session time zone UTC "
              "(Sluice's TIMESTAMP carries no zone); SET TimeZone = 'UTC' or cast to TIMESTAMPTZ",
              in.GetString());
        }
        if (r == TextResult::kRegionZone) {
          throw duckdb::ConversionException(
              "CAST('%s' AS TIMESTAMP): zone names are not supported in the text, only offsets "
              "(Z, +01:00, UTC+1); convert with to_utc_timestamp(ts, zone)",
              in.GetString());
        }
        if (!data.is_try) Malformed(in.GetString(), "TIMESTAMP");
        mask.SetInvalid(row);
        return duckdb::timestamp_t();
      });
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

void EpochSeconds(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::UnaryExecutor::Execute<duckdb::timestamp_tz_t, int64_t>(
      args.data[0], result, args.size(), [](duckdb::timestamp_tz_t ts) {
        if (!duckdb::Timestamp::IsFinite(ts)) {
          throw duckdb::ConversionException("CAST(timestamp AS number): the timestamp is infinite");
        }
        return FloorDiv(ts.value, 1000000);
      });
}

void EpochSecondsDouble(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::UnaryExecutor::Execute<duckdb::timestamp_tz_t, double>(
      args.data[0], result, args.size(), [](duckdb::timestamp_tz_t ts) {
        if (!duckdb::Timestamp::IsFinite(ts)) {
          throw duckdb::ConversionException("CAST(timestamp AS DOUBLE): the timestamp is infinite");
        }
        return static_cast<double>(ts.value) / 1e6;
      });
}

void SecondsToTimestamp(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::UnaryExecutor::Execute<int64_t, duckdb::timestamp_tz_t>(
      args.data[0], result, args.size(), [](int64_t s) {
        constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 1000000;
        if (s > kMax || s < -kMax) {
          throw duckdb::ConversionException(
              "[ARITHMETIC_OVERFLOW] CAST(%lld AS TIMESTAMP): out of the range of timestamps",
              static_cast<long long>(s));
        }
        return duckdb::timestamp_tz_t(s * 1000000);
      });
}

void DoubleSecondsToTimestamp(duckdb::DataChunk& args, duckdb::ExpressionState&,
                              duckdb::Vector& result) {
  duckdb::UnaryExecutor::Execute<double, duckdb::timestamp_tz_t>(
      args.data[0], result, args.size(), [](double s) {
        const double micros = std::trunc(s * 1e6);
        if (!std::isfinite(micros) || std::fabs(micros) >= 9.2e18) {
          throw duckdb::ConversionException("CAST(%s AS TIMESTAMP): out of the range of timestamps",
                                            SparkDoubleText(s));
        }
        return duckdb::timestamp_tz_t(static_cast<int64_t>(micros));
      });
}

void TruncDouble(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::UnaryExecutor::Execute<double, double>(args.data[0], result, args.size(),
                                                 [](double v) { return std::trunc(v); });
}

// ---------------------------------------------------------------------------------------------
// Building the expressions.

unique_ptr<Expression> Call(duckdb::ScalarFunction fn, unique_ptr<Expression> arg,
                            unique_ptr<duckdb::FunctionData> data = nullptr) {
  duckdb::vector<unique_ptr<Expression>> children;
  children.push_back(std::move(arg));
  LogicalType type = fn.return_type;
  return duckdb::make_uniq<duckdb::BoundFunctionExpression>(std::move(type), std::move(fn),
                                                            std::move(children), std::move(data));
}

unique_ptr<Expression> Builtin(duckdb::ClientContext& context, const std::string& name,
                               unique_ptr<Expression> arg) {
  duckdb::vector<unique_ptr<Expression>> children;
  children.push_back(std::move(arg));
  duckdb::ErrorData error;
  auto e = duckdb::FunctionBinder(context).BindScalarFunction(DEFAULT_SCHEMA, name,
                                                              std::move(children), error);
  if (!e) error.Throw();
  return e;
}

unique_ptr<Expression> Cast(duckdb::ClientContext& context, unique_ptr<Expression> e,
                            const LogicalType& type) {
  return duckdb::BoundCastExpression::AddCastToType(context, std::move(e), type);
}

bool IsFloating(LogicalTypeId id) {
  return id == LogicalTypeId::DOUBLE || id == LogicalTypeId::FLOAT;
}
bool IsIntegral(LogicalTypeId id) {
  return id == LogicalTypeId::TINYINT || id == LogicalTypeId::SMALLINT ||
         id == LogicalTypeId::INTEGER || id == LogicalTypeId::BIGINT ||
         id == LogicalTypeId::HUGEINT || id == LogicalTypeId::UTINYINT ||
         id == LogicalTypeId::USMALLINT || id == LogicalTypeId::UINTEGER ||
         id == LogicalTypeId::UBIGINT;
}
bool IsTimestamp(LogicalTypeId id) {
  return id == LogicalTypeId::TIMESTAMP || id == LogicalTypeId::TIMESTAMP_TZ ||
         id == LogicalTypeId::TIMESTAMP_MS || id == LogicalTypeId::TIMESTAMP_NS ||
         id == LogicalTypeId::TIMESTAMP_SEC;
}

enum class Target { kIntegral, kFloating, kDate, kTimestamp, kNested, kOther };

Target TargetOf(const std::string& name) {
  const std::string t = AsciiUpper(name);
  for (const char* n : {"TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "INT1", "INT2", "INT4",
                        "INT8", "LONG", "SHORT", "BYTE"}) {
    if (t == n) return Target::kIntegral;
  }
  for (const char* n : {"DOUBLE", "FLOAT", "REAL", "FLOAT4", "FLOAT8"}) {
    if (t == n) return Target::kFloating;
  }
  if (t == "DATE") return Target::kDate;
  if (t == "TIMESTAMP") return Target::kTimestamp;
  if (!t.empty() && (t.back() == ']' || t.rfind("MAP(", 0) == 0 || t.rfind("STRUCT(", 0) == 0)) {
    return Target::kNested;
  }
  return Target::kOther;
}

unique_ptr<Expression> CastInput(duckdb::FunctionBindExpressionInput& input, bool is_try) {
  auto& children = input.children;
  duckdb::ClientContext& context = input.context;
  if (!children[1]->IsFoldable()) {
    throw duckdb::BinderException("spark_cast_input: the target type must be a constant");
  }
  const std::string target_name =
      duckdb::ExpressionExecutor::EvaluateScalar(context, *children[1]).ToString();
  const Target target = TargetOf(target_name);
  unique_ptr<Expression> x = std::move(children[0]);
  const LogicalTypeId src = x->return_type.id();
  auto data = [&]() {
    return duckdb::make_uniq<CastData>(is_try, SessionIsUtc(context), target_name);
  };
  switch (target) {
    case Target::kIntegral:
      if (IsFloating(src)) {
        return Call({"spark_trunc", {LogicalType::DOUBLE}, LogicalType::DOUBLE, TruncDouble},
                    Cast(context, std::move(x), LogicalType::DOUBLE));
      }
      if (src == LogicalTypeId::DECIMAL) return Builtin(context, "trunc", std::move(x));
      if (src == LogicalTypeId::VARCHAR) {
        return Call(
            {"spark_integral_text", {LogicalType::VARCHAR}, LogicalType::VARCHAR, IntegralText},
            std::move(x), data());
      }
      if (IsTimestamp(src)) {
        return Call(
            {"spark_epoch_seconds", {LogicalType::TIMESTAMP_TZ}, LogicalType::BIGINT, EpochSeconds},
            Cast(context, std::move(x), LogicalType::TIMESTAMP_TZ));
      }
      break;
    case Target::kFloating:
      if (src == LogicalTypeId::VARCHAR) {
        return Call(
            {"spark_floating_text", {LogicalType::VARCHAR}, LogicalType::VARCHAR, FloatingTextFn},
            std::move(x));
      }
      if (IsTimestamp(src)) {
        return Call({"spark_epoch_seconds_double",
                     {LogicalType::TIMESTAMP_TZ},
                     LogicalType::DOUBLE,
                     EpochSecondsDouble},
                    Cast(context, std::move(x), LogicalType::TIMESTAMP_TZ));
      }
      break;
    case Target::kDate:
      if (src == LogicalTypeId::VARCHAR) {
        return Call({"spark_date_text", {LogicalType::VARCHAR}, LogicalType::DATE, DateText},
                    std::move(x), data());
      }
      break;
    case Target::kTimestamp:
      if (src == LogicalTypeId::VARCHAR) {
        return Call(
            {"spark_timestamp_text", {LogicalType::VARCHAR}, LogicalType::TIMESTAMP, TimestampText},
            std::move(x), data());
      }
      if (IsIntegral(src)) {
        return Call({"spark_seconds_timestamp",
                     {LogicalType::BIGINT},
                     LogicalType::TIMESTAMP_TZ,
                     SecondsToTimestamp},
                    Cast(context, std::move(x), LogicalType::BIGINT));
      }
      if (IsFloating(src) || src == LogicalTypeId::DECIMAL) {
        return Call({"spark_seconds_timestamp",
                     {LogicalType::DOUBLE},
                     LogicalType::TIMESTAMP_TZ,
                     DoubleSecondsToTimestamp},
                    Cast(context, std::move(x), LogicalType::DOUBLE));
      }
      break;
    case Target::kNested:
      if (src == LogicalTypeId::VARCHAR) {
        throw duckdb::BinderException(
            "[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION] cannot cast STRING to %s: Spark casts no "
            "string to an array, a map or a struct (from_json(s, '<schema>') reads JSON text)",
            target_name);
      }
      break;
    case Target::kOther:
      break;
  }
  return x;
}

unique_ptr<Expression> CastInputExpression(duckdb::FunctionBindExpressionInput& input) {
  return CastInput(input, false);
}
unique_ptr<Expression> TryCastInputExpression(duckdb::FunctionBindExpressionInput& input) {
  return CastInput(input, true);
}

// The bind of the functions that become another expression: the arguments keep their types.
unique_ptr<duckdb::FunctionData> KeepTypes(duckdb::ClientContext&, duckdb::ScalarFunction& bound,
                                           duckdb::vector<unique_ptr<Expression>>& arguments) {
  for (duckdb::idx_t i = 0; i < arguments.size() && i < bound.arguments.size(); ++i) {
    if (bound.arguments[i].id() == LogicalTypeId::ANY) {
      bound.arguments[i] = arguments[i]->return_type;
    }
  }
  bound.return_type = arguments[0]->return_type;
  return nullptr;
}

void NeverRuns(duckdb::DataChunk&, duckdb::ExpressionState&, duckdb::Vector&) {
  throw duckdb::InternalException("a Spark function that is replaced when bound was executed");
}

void TypeOf(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  result.Reference(duckdb::Value(SparkTypeName(args.data[0].GetType())));
}

unique_ptr<duckdb::FunctionData> BindTypeOf(duckdb::ClientContext&, duckdb::ScalarFunction& bound,
                                            duckdb::vector<unique_ptr<Expression>>& arguments) {
  bound.arguments[0] = arguments[0]->return_type;
  return nullptr;
}

unique_ptr<Expression> TypeOfExpression(duckdb::FunctionBindExpressionInput& input) {
  return duckdb::make_uniq<duckdb::BoundConstantExpression>(
      duckdb::Value(SparkTypeName(input.children[0]->return_type)));
}

template <const char* kName>
unique_ptr<Expression> RoundingExpression(duckdb::FunctionBindExpressionInput& input) {
  unique_ptr<Expression> x = std::move(input.children[0]);
  const bool floating = IsFloating(x->return_type.id());
  auto e = Builtin(input.context, kName, std::move(x));
  return floating ? Cast(input.context, std::move(e), LogicalType::BIGINT) : std::move(e);
}
constexpr char kCeil[] = "ceil";
constexpr char kFloor[] = "floor";

// spark_add_months_interval(x, i): x + i, a DATE when x is a DATE (Spark adds a year-month
// interval to a DATE as a DATE; DuckDB gives a TIMESTAMP).
unique_ptr<Expression> AddMonthsExpression(duckdb::FunctionBindExpressionInput& input) {
  duckdb::vector<unique_ptr<Expression>> children;
  const bool date = input.children[0]->return_type.id() == LogicalTypeId::DATE;
  children.push_back(std::move(input.children[0]));
  children.push_back(std::move(input.children[1]));
  duckdb::ErrorData error;
  auto e = duckdb::FunctionBinder(input.context)
               .BindScalarFunction(DEFAULT_SCHEMA, "+", std::move(children), error, true);
  if (!e) error.Throw();
  return date ? Cast(input.context, std::move(e), LogicalType::DATE) : std::move(e);
}

// conv(s, from, to): Spark's NumberConverter. The digits of s valid in base `from` (case
// insensitive, a leading '-' negates as an unsigned 64-bit number) written in base |to|
// (upper case); a negative `to` writes a negative number with a '-'. NULL for bases outside
// 2..36.
void Conv(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::TernaryExecutor::ExecuteWithNulls<duckdb::string_t, int32_t, int32_t, duckdb::string_t>(
      args.data[0], args.data[1], args.data[2], result, args.size(),
      [&](duckdb::string_t in, int32_t from, int32_t to, duckdb::ValidityMask& mask,
          duckdb::idx_t row) {
        const int to_base = to < 0 ? -to : to;
        if (from < 2 || from > 36 || to_base < 2 || to_base > 36) {
          mask.SetInvalid(row);
          return duckdb::string_t();
        }
        const std::string text = in.GetString();
        std::string_view s = Trim(text);
        bool negative = false;
        if (!s.empty() && s[0] == '-') {
          negative = true;
          s.remove_prefix(1);
        }
        uint64_t v = 0;
        bool overflow = false;
        for (char c : s) {
          int d = IsDigit(c)               ? c - '0'
                  : (c >= 'a' && c <= 'z') ? c - 'a' + 10
                  : (c >= 'A' && c <= 'Z') ? c - 'A' + 10
                                           : 99;
          if (d >= from) break;
          if (v > (std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(d)) /
                      static_cast<uint64_t>(from)) {
            overflow = true;
            break;
          }
          v = v * static_cast<uint64_t>(from) + static_cast<uint64_t>(d);
        }
        if (overflow) v = std::numeric_limits<uint64_t>::max();
        if (negative) v = ~v + 1;
        bool minus = false;
        if (to < 0 && static_cast<int64_t>(v) < 0) {
          minus = true;
          v = ~v + 1;
        }
        std::string out;
        do {
          const int d = static_cast<int>(v % static_cast<uint64_t>(to_base));
          out.insert(out.begin(), static_cast<char>(d < 10 ? '0' + d : 'A' + d - 10));
          v /= static_cast<uint64_t>(to_base);
        } while (v != 0);
        if (minus) out.insert(out.begin(), '-');
        return duckdb::StringVector::AddString(result, out);
      });
}

}  // namespace

std::string SparkDoubleText(double v) { return FloatingText(v); }
std::string SparkFloatText(float v) { return FloatingText(v); }

bool SessionIsUtc(duckdb::ClientContext& context) {
  duckdb::Value zone;
  if (context.TryGetCurrentSetting("TimeZone", zone) && !zone.IsNull()) {
    const std::string z = zone.ToString();
    return z == "UTC" || z == "Etc/UTC" || z == "GMT" || z == "Etc/GMT";
  }
  return true;
}

std::string SparkTypeName(const LogicalType& type) {
  switch (type.id()) {
    case LogicalTypeId::BOOLEAN:
      return "boolean";
    case LogicalTypeId::TINYINT:
      return "tinyint";
    case LogicalTypeId::SMALLINT:
      return "smallint";
    case LogicalTypeId::INTEGER:
      return "int";
    case LogicalTypeId::BIGINT:
      return "bigint";
    case LogicalTypeId::FLOAT:
      return "float";
    case LogicalTypeId::DOUBLE:
      return "double";
    case LogicalTypeId::DECIMAL:
      return "decimal(" + std::to_string(duckdb::DecimalType::GetWidth(type)) + "," +
             std::to_string(duckdb::DecimalType::GetScale(type)) + ")";
    case LogicalTypeId::VARCHAR:
      return "string";
    case LogicalTypeId::BLOB:
      return "binary";
    case LogicalTypeId::DATE:
      return "date";
    case LogicalTypeId::TIMESTAMP:
    case LogicalTypeId::TIMESTAMP_TZ:
    case LogicalTypeId::TIMESTAMP_MS:
    case LogicalTypeId::TIMESTAMP_NS:
    case LogicalTypeId::TIMESTAMP_SEC:
      return "timestamp";
    case LogicalTypeId::SQLNULL:
      return "void";
    case LogicalTypeId::INTERVAL:
      return "interval";
    case LogicalTypeId::LIST:
      return "array<" + SparkTypeName(duckdb::ListType::GetChildType(type)) + ">";
    case LogicalTypeId::ARRAY:
      return "array<" + SparkTypeName(duckdb::ArrayType::GetChildType(type)) + ">";
    case LogicalTypeId::MAP:
      return "map<" + SparkTypeName(duckdb::MapType::KeyType(type)) + "," +
             SparkTypeName(duckdb::MapType::ValueType(type)) + ">";
    case LogicalTypeId::STRUCT: {
      std::string out = "struct<";
      const auto& fields = duckdb::StructType::GetChildTypes(type);
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i > 0) out += ",";
        out += fields[i].first + ":" + SparkTypeName(fields[i].second);
      }
      return out + ">";
    }
    default:
      return AsciiLower(type.ToString());
  }
}

std::string SparkText(const duckdb::Value& v) {
  if (v.IsNull()) return "null";
  const LogicalType& type = v.type();
  switch (type.id()) {
    case LogicalTypeId::DOUBLE:
      return SparkDoubleText(v.GetValue<double>());
    case LogicalTypeId::FLOAT:
      return SparkFloatText(v.GetValue<float>());
    case LogicalTypeId::TIMESTAMP_TZ:
      return duckdb::Timestamp::ToString(v.GetValue<duckdb::timestamp_t>());
    case LogicalTypeId::LIST:
    case LogicalTypeId::ARRAY: {
      const auto& items = type.id() == LogicalTypeId::LIST ? duckdb::ListValue::GetChildren(v)
                                                           : duckdb::ArrayValue::GetChildren(v);
      std::string out = "[";
      for (size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += ", ";
        out += SparkText(items[i]);
      }
      return out + "]";
    }
    case LogicalTypeId::MAP: {
      std::string out = "{";
      const auto& entries = duckdb::MapValue::GetChildren(v);
      for (size_t i = 0; i < entries.size(); ++i) {
        const auto& kv = duckdb::StructValue::GetChildren(entries[i]);
        if (i > 0) out += ", ";
        out += SparkText(kv[0]) + " -> " + SparkText(kv[1]);
      }
      return out + "}";
    }
    case LogicalTypeId::STRUCT: {
      std::string out = "{";
      const auto& fields = duckdb::StructValue::GetChildren(v);
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i > 0) out += ", ";
        out += SparkText(fields[i]);
      }
      return out + "}";
    }
    default:
      return v.ToString();
  }
}

void RegisterSparkCasts(duckdb::ExtensionLoader& loader) {
  duckdb::ScalarFunction cast_input("spark_cast_input", {LogicalType::ANY, LogicalType::VARCHAR},
                                    LogicalType::ANY, NeverRuns, KeepTypes);
  cast_input.bind_expression = CastInputExpression;
  cast_input.null_handling = duckdb::FunctionNullHandling::SPECIAL_HANDLING;
  duckdb::ScalarFunction try_cast_input = cast_input;
  try_cast_input.name = "spark_try_cast_input";
  try_cast_input.bind_expression = TryCastInputExpression;
  duckdb::ScalarFunction type_of("spark_typeof", {LogicalType::ANY}, LogicalType::VARCHAR, TypeOf,
                                 BindTypeOf);
  type_of.bind_expression = TypeOfExpression;
  type_of.null_handling = duckdb::FunctionNullHandling::SPECIAL_HANDLING;
  duckdb::ScalarFunction ceil("spark_ceil", {LogicalType::ANY}, LogicalType::ANY, NeverRuns,
                              KeepTypes);
  ceil.bind_expression = RoundingExpression<kCeil>;
  duckdb::ScalarFunction floor = ceil;
  floor.name = "spark_floor";
  floor.bind_expression = RoundingExpression<kFloor>;
  duckdb::ScalarFunction add_months("spark_add_months_interval",
                                    {LogicalType::ANY, LogicalType::INTERVAL}, LogicalType::ANY,
                                    NeverRuns, KeepTypes);
  add_months.bind_expression = AddMonthsExpression;
  duckdb::ScalarFunction conv("spark_conv",
                              {LogicalType::VARCHAR, LogicalType::INTEGER, LogicalType::INTEGER},
                              LogicalType::VARCHAR, Conv);
  for (const duckdb::ScalarFunction& f :
       {cast_input, try_cast_input, type_of, ceil, floor, add_months, conv}) {
    loader.RegisterFunction(f);
  }
}

}  // namespace sluice::engine::internal
