#include "engine/spark_arithmetic.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "duckdb/common/vector_operations/binary_executor.hpp"
#include "duckdb/execution/expression_executor.hpp"
#include "duckdb/function/function_binder.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/planner/expression/bound_cast_expression.hpp"
#include "duckdb/planner/expression/bound_constant_expression.hpp"
#include "duckdb/planner/expression/bound_function_expression.hpp"
#include "engine/spark_int128.h"

namespace sluice::engine::internal {
namespace {

using duckdb::Expression;
using duckdb::LogicalType;
using duckdb::LogicalTypeId;
using duckdb::unique_ptr;
[[noreturn]] void ThrowDivideByZero() {
  throw duckdb::OutOfRangeException(
      "[DIVIDE_BY_ZERO] Division by zero (Spark's ANSI mode): use try_divide(a, b) to get NULL "
      "instead");
}

[[noreturn]] void ThrowRemainderByZero() {
  throw duckdb::OutOfRangeException(
      "[REMAINDER_BY_ZERO] Remainder by zero (Spark's ANSI mode): use try_mod(a, b) to get NULL "
      "instead");
}

// The precision of a DECIMAL result, for the out-of-range message.
struct PrecisionData : duckdb::FunctionData {
  explicit PrecisionData(int p) : precision(p) {}
  unique_ptr<duckdb::FunctionData> Copy() const override {
    return duckdb::make_uniq<PrecisionData>(precision);
  }
  bool Equals(const duckdb::FunctionData& other) const override {
    return other.Cast<PrecisionData>().precision == precision;
  }
  int precision;
};

int ResultPrecision(duckdb::ExpressionState& state) {
  auto& f = state.expr.Cast<duckdb::BoundFunctionExpression>();
  return f.bind_info ? f.bind_info->Cast<PrecisionData>().precision : kMaxPrecision;
}

[[noreturn]] void ThrowOutOfRange(int precision, int scale) {
  throw duckdb::OutOfRangeException(
      "[NUMERIC_VALUE_OUT_OF_RANGE] the quotient does not fit DECIMAL(%d,%d) (Spark's ANSI mode): "
      "use try_divide(a, b) to get NULL instead",
      precision, scale);
}

// DECIMAL(38, s1) / DECIMAL(38, s2) -> DECIMAL(38, S), the precision checked against the bind
// data's.
void DecimalDivide(duckdb::DataChunk& args, duckdb::ExpressionState& state,
                   duckdb::Vector& result) {
  const int s1 = duckdb::DecimalType::GetScale(args.data[0].GetType());
  const int s2 = duckdb::DecimalType::GetScale(args.data[1].GetType());
  const int s = duckdb::DecimalType::GetScale(result.GetType());
  const int precision = ResultPrecision(state);
  const u128 limit = Pow10(precision);
  duckdb::BinaryExecutor::Execute<duckdb::hugeint_t, duckdb::hugeint_t, duckdb::hugeint_t>(
      args.data[0], args.data[1], result, args.size(),
      [&](duckdb::hugeint_t a, duckdb::hugeint_t b) {
        const i128 x = ToI128(a), y = ToI128(b);
        if (y == 0) ThrowDivideByZero();
        u128 q = 0;
        if (!ScaledQuotient(Magnitude(x), Magnitude(y), s - s1 + s2, &q) || q >= limit) {
          ThrowOutOfRange(precision, s);
        }
        const i128 v = static_cast<i128>(q);
        return FromI128((x < 0) != (y < 0) ? -v : v);
      });
}

// DECIMAL(38, s) % DECIMAL(38, s) -> DECIMAL(38, s): the sign of the dividend, as Java's.
void DecimalRemainder(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::BinaryExecutor::Execute<duckdb::hugeint_t, duckdb::hugeint_t, duckdb::hugeint_t>(
      args.data[0], args.data[1], result, args.size(),
      [&](duckdb::hugeint_t a, duckdb::hugeint_t b) {
        const i128 x = ToI128(a), y = ToI128(b);
        if (y == 0) ThrowRemainderByZero();
        return FromI128(x % y);
      });
}

void DoubleDivide(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::BinaryExecutor::Execute<double, double, double>(args.data[0], args.data[1], result,
                                                          args.size(), [](double a, double b) {
                                                            if (b == 0) ThrowDivideByZero();
                                                            return a / b;
                                                          });
}

void DoubleRemainder(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::BinaryExecutor::Execute<double, double, double>(args.data[0], args.data[1], result,
                                                          args.size(), [](double a, double b) {
                                                            if (b == 0) ThrowRemainderByZero();
                                                            return std::fmod(a, b);
                                                          });
}

void IntegralRemainder(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::BinaryExecutor::Execute<int64_t, int64_t, int64_t>(
      args.data[0], args.data[1], result, args.size(), [](int64_t a, int64_t b) -> int64_t {
        if (b == 0) ThrowRemainderByZero();
        return b == -1 ? 0 : a % b;  // INT64_MIN % -1 is 0 in Java (and undefined in C++)
      });
}

// ---------------------------------------------------------------------------------------------
// The types of the operands.

enum class Kind { kIntegral, kFloating, kDecimal, kOther };

Kind KindOf(const LogicalType& t) {
  switch (t.id()) {
    case LogicalTypeId::TINYINT:
    case LogicalTypeId::SMALLINT:
    case LogicalTypeId::INTEGER:
    case LogicalTypeId::BIGINT:
    case LogicalTypeId::UTINYINT:
    case LogicalTypeId::USMALLINT:
    case LogicalTypeId::UINTEGER:
    case LogicalTypeId::INTEGER_LITERAL:
    case LogicalTypeId::SQLNULL:
      return Kind::kIntegral;
    case LogicalTypeId::FLOAT:
    case LogicalTypeId::DOUBLE:
      return Kind::kFloating;
    case LogicalTypeId::DECIMAL:
      return Kind::kDecimal;
    default:
      return Kind::kOther;  // HUGEINT, UBIGINT, intervals, strings: the engine's operator
  }
}

struct DecimalShape {
  int precision;
  int scale;
};

// Spark's DECIMAL of an operand: its type, or for an integral one the digits of a literal (Spark
// promotes a literal to the smallest DECIMAL that holds it) or of its type.
DecimalShape ShapeOf(const Expression& e) {
  const LogicalType& t = e.return_type;
  if (t.id() == LogicalTypeId::DECIMAL) {
    return {duckdb::DecimalType::GetWidth(t), duckdb::DecimalType::GetScale(t)};
  }
  if (e.GetExpressionClass() == duckdb::ExpressionClass::BOUND_CONSTANT) {
    const auto& value = e.Cast<duckdb::BoundConstantExpression>().value;
    if (!value.IsNull()) {
      std::string digits = value.ToString();
      if (!digits.empty() && digits[0] == '-') digits.erase(0, 1);
      return {std::max(1, static_cast<int>(digits.size())), 0};
    }
  }
  switch (t.id()) {
    case LogicalTypeId::TINYINT:
    case LogicalTypeId::UTINYINT:
      return {3, 0};
    case LogicalTypeId::SMALLINT:
    case LogicalTypeId::USMALLINT:
      return {5, 0};
    case LogicalTypeId::INTEGER:
    case LogicalTypeId::UINTEGER:
    case LogicalTypeId::SQLNULL:
      return {10, 0};
    default:
      return {20, 0};  // BIGINT, an integer literal past INT
  }
}

// Spark's DecimalType.adjustPrecisionScale (spark.sql.decimalOperations.allowPrecisionLoss).
DecimalShape Adjust(int precision, int scale) {
  if (precision <= kMaxPrecision) return {precision, scale};
  const int int_digits = precision - scale;
  const int min_scale = std::min(scale, 6);
  return {kMaxPrecision, std::max(kMaxPrecision - int_digits, min_scale)};
}

unique_ptr<Expression> Cast(duckdb::ClientContext& context, unique_ptr<Expression> e,
                            const LogicalType& type) {
  return duckdb::BoundCastExpression::AddCastToType(context, std::move(e), type);
}

unique_ptr<Expression> Call(duckdb::ScalarFunction fn, unique_ptr<Expression> a,
                            unique_ptr<Expression> b,
                            unique_ptr<duckdb::FunctionData> data = nullptr) {
  duckdb::vector<unique_ptr<Expression>> children;
  children.push_back(std::move(a));
  children.push_back(std::move(b));
  LogicalType type = fn.return_type;
  return duckdb::make_uniq<duckdb::BoundFunctionExpression>(std::move(type), std::move(fn),
                                                            std::move(children), std::move(data));
}

unique_ptr<Expression> Builtin(duckdb::ClientContext& context, const std::string& op,
                               duckdb::vector<unique_ptr<Expression>> children) {
  duckdb::ErrorData error;
  auto e = duckdb::FunctionBinder(context).BindScalarFunction(DEFAULT_SCHEMA, op,
                                                              std::move(children), error, true);
  if (!e) error.Throw();
  return e;
}

// True for a constant divisor other than 0 and -1: the engine's operator then gives Spark's
// answer without a check per row (Nexmark's auction % 123).
bool SafeConstantDivisor(duckdb::ClientContext& context, const Expression& e) {
  if (!e.IsFoldable()) return false;
  duckdb::Value v;
  if (!duckdb::ExpressionExecutor::TryEvaluateScalar(context, e, v) || v.IsNull()) return false;
  duckdb::Value d;
  if (!v.DefaultTryCastAs(LogicalType::DOUBLE, d, nullptr)) return false;
  const double x = d.GetValue<double>();
  return x != 0 && x != -1;
}

unique_ptr<Expression> DivideExpression(duckdb::FunctionBindExpressionInput& input) {
  auto& ctx = input.context;
  auto& c = input.children;
  const Kind a = KindOf(c[0]->return_type), b = KindOf(c[1]->return_type);
  if (a == Kind::kOther || b == Kind::kOther) return Builtin(ctx, "/", std::move(c));
  if (a == Kind::kFloating || b == Kind::kFloating ||
      (a != Kind::kDecimal && b != Kind::kDecimal)) {
    const LogicalType d = LogicalType::DOUBLE;
    return Call({"spark_double_divide", {d, d}, d, DoubleDivide}, Cast(ctx, std::move(c[0]), d),
                Cast(ctx, std::move(c[1]), d));
  }
  const DecimalShape l = ShapeOf(*c[0]), r = ShapeOf(*c[1]);
  const int scale = std::max(6, l.scale + r.precision + 1);
  const DecimalShape out = Adjust(l.precision - l.scale + r.scale + scale, scale);
  const LogicalType wide = LogicalType::DECIMAL(kMaxPrecision, out.scale);
  auto q = Call(
      {"spark_decimal_divide",
       {LogicalType::DECIMAL(kMaxPrecision, l.scale), LogicalType::DECIMAL(kMaxPrecision, r.scale)},
       wide,
       DecimalDivide},
      Cast(ctx, std::move(c[0]), LogicalType::DECIMAL(kMaxPrecision, l.scale)),
      Cast(ctx, std::move(c[1]), LogicalType::DECIMAL(kMaxPrecision, r.scale)),
      duckdb::make_uniq<PrecisionData>(out.precision));
  return Cast(ctx, std::move(q), LogicalType::DECIMAL(out.precision, out.scale));
}

unique_ptr<Expression> RemainderExpression(duckdb::FunctionBindExpressionInput& input) {
  auto& ctx = input.context;
  auto& c = input.children;
  const Kind a = KindOf(c[0]->return_type), b = KindOf(c[1]->return_type);
  if (a == Kind::kOther || b == Kind::kOther) return Builtin(ctx, "%", std::move(c));
  if (a == Kind::kIntegral && b == Kind::kIntegral && SafeConstantDivisor(ctx, *c[1]) &&
      c[0]->return_type.id() != LogicalTypeId::SQLNULL) {
    return Builtin(ctx, "%", std::move(c));
  }
  if (a == Kind::kIntegral && b == Kind::kIntegral) {
    LogicalType type = LogicalType::ForceMaxLogicalType(c[0]->return_type, c[1]->return_type);
    if (KindOf(type) != Kind::kIntegral || type.id() == LogicalTypeId::INTEGER_LITERAL ||
        type.id() == LogicalTypeId::SQLNULL) {
      type = LogicalType::INTEGER;
    }
    const LogicalType l = LogicalType::BIGINT;
    auto e = Call({"spark_integral_remainder", {l, l}, l, IntegralRemainder},
                  Cast(ctx, std::move(c[0]), l), Cast(ctx, std::move(c[1]), l));
    return Cast(ctx, std::move(e), type);
  }
  if (a == Kind::kFloating || b == Kind::kFloating) {
    const bool both_float = c[0]->return_type.id() != LogicalTypeId::DOUBLE &&
                            c[1]->return_type.id() != LogicalTypeId::DOUBLE;
    const LogicalType d = LogicalType::DOUBLE;
    auto e = Call({"spark_double_remainder", {d, d}, d, DoubleRemainder},
                  Cast(ctx, std::move(c[0]), d), Cast(ctx, std::move(c[1]), d));
    return both_float ? Cast(ctx, std::move(e), LogicalType::FLOAT) : std::move(e);
  }
  const DecimalShape l = ShapeOf(*c[0]), r = ShapeOf(*c[1]);
  const int scale = std::max(l.scale, r.scale);
  const DecimalShape out =
      Adjust(std::min(l.precision - l.scale, r.precision - r.scale) + scale, scale);
  const LogicalType wide = LogicalType::DECIMAL(kMaxPrecision, scale);
  auto e = Call({"spark_decimal_remainder", {wide, wide}, wide, DecimalRemainder},
                Cast(ctx, std::move(c[0]), wide), Cast(ctx, std::move(c[1]), wide));
  return Cast(ctx, std::move(e), LogicalType::DECIMAL(out.precision, out.scale));
}

// The bind of the functions that become another expression: the arguments keep their types.
unique_ptr<duckdb::FunctionData> KeepTypes(duckdb::ClientContext&, duckdb::ScalarFunction& bound,
                                           duckdb::vector<unique_ptr<Expression>>& arguments) {
  for (duckdb::idx_t i = 0; i < arguments.size() && i < bound.arguments.size(); ++i) {
    bound.arguments[i] = arguments[i]->return_type;
  }
  bound.return_type = arguments[0]->return_type;
  return nullptr;
}

void NeverRuns(duckdb::DataChunk&, duckdb::ExpressionState&, duckdb::Vector&) {
  throw duckdb::InternalException("a Spark operator that is replaced when bound was executed");
}

}  // namespace

void RegisterSparkArithmetic(duckdb::ExtensionLoader& loader) {
  const LogicalType any = LogicalType::ANY;
  duckdb::ScalarFunction divide("spark_divide", {any, any}, any, NeverRuns, KeepTypes);
  divide.bind_expression = DivideExpression;
  duckdb::ScalarFunction remainder("spark_remainder", {any, any}, any, NeverRuns, KeepTypes);
  remainder.bind_expression = RemainderExpression;
  loader.RegisterFunction(divide);
  loader.RegisterFunction(remainder);
}

}  // namespace sluice::engine::internal
