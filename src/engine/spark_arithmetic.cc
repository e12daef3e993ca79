#include "engine/spark_arithmetic.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "duckdb/catalog/catalog.hpp"
#include "duckdb/catalog/catalog_entry/aggregate_function_catalog_entry.hpp"
#include "duckdb/common/vector_operations/binary_executor.hpp"
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
using u128 = unsigned __int128;
using i128 = __int128;

constexpr int kMaxPrecision = 38;

// ---------------------------------------------------------------------------------------------
// Exact decimal quotients on 128-bit magnitudes.

u128 Pow10(int n) {
  u128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

i128 ToI128(duckdb::hugeint_t h) {
  return static_cast<i128>((static_cast<u128>(static_cast<uint64_t>(h.upper)) << 64) | h.lower);
}

duckdb::hugeint_t FromI128(i128 v) {
  duckdb::hugeint_t h;
  h.lower = static_cast<uint64_t>(static_cast<u128>(v));
  h.upper = static_cast<int64_t>(static_cast<u128>(v) >> 64);
  return h;
}

u128 Magnitude(i128 v) { return v < 0 ? static_cast<u128>(0) - static_cast<u128>(v) : v; }

// x * 10^k / y rounded half up (k may be negative), for y > 0. False when the result needs more
// than 38 digits.
bool ScaledQuotient(u128 x, u128 y, int k, u128* out) {
  const u128 limit = Pow10(kMaxPrecision);  // results stay below 10^38
  u128 q = x / y;
  u128 r = x % y;
  if (k < 0) {
    const u128 unit = Pow10(std::min(-k, kMaxPrecision));
    const u128 dropped = q % unit;
    q /= unit;
    if (dropped >= unit / 2) ++q;  // the dropped part (with r) is at least half a unit
    *out = q;
    return q < limit;
  }
  if (q >= limit) return false;
  for (int i = 0; i < k; ++i) {
    // 10 * r / y and 10 * r % y without overflow: r < y < 2^127, so r + r never wraps.
    u128 digit = 0, acc = 0;
    for (int j = 0; j < 10; ++j) {
      acc += r;
      if (acc >= y) {
        acc -= y;
        ++digit;
      }
    }
    r = acc;
    if (q > (limit - 1 - digit) / 10) return false;
    q = q * 10 + digit;
  }
  if (r >= y - r) ++q;  // 2r >= y: half up
  *out = q;
  return q < limit;
}

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

// ---------------------------------------------------------------------------------------------
// avg(DECIMAL(p, s)): DECIMAL(min(38, p + 4), min(38, s + 4)).

struct AvgState {
  duckdb::hugeint_t sum;
  int64_t count;
};

struct AvgData : duckdb::FunctionData {
  AvgData(int shift_p, int precision_p) : shift(shift_p), precision(precision_p) {}
  unique_ptr<duckdb::FunctionData> Copy() const override {
    return duckdb::make_uniq<AvgData>(shift, precision);
  }
  bool Equals(const duckdb::FunctionData& other) const override {
    const auto& o = other.Cast<AvgData>();
    return o.shift == shift && o.precision == precision;
  }
  int shift;  // the result's scale minus the input's
  int precision;
};

struct DecimalAvg {
  template <class STATE>
  static void Initialize(STATE& state) {
    state.sum = duckdb::hugeint_t(0);
    state.count = 0;
  }
  template <class INPUT, class STATE, class OP>
  static void Operation(STATE& state, const INPUT& input, duckdb::AggregateUnaryInput&) {
    state.sum = FromI128(Add(ToI128(state.sum), ToI128(input)));
    ++state.count;
  }
  template <class INPUT, class STATE, class OP>
  static void ConstantOperation(STATE& state, const INPUT& input, duckdb::AggregateUnaryInput&,
                                duckdb::idx_t count) {
    for (duckdb::idx_t i = 0; i < count; ++i) {
      state.sum = FromI128(Add(ToI128(state.sum), ToI128(input)));
    }
    state.count += static_cast<int64_t>(count);
  }
  template <class STATE, class OP>
  static void Combine(const STATE& source, STATE& target, duckdb::AggregateInputData&) {
    target.sum = FromI128(Add(ToI128(target.sum), ToI128(source.sum)));
    target.count += source.count;
  }
  template <class T, class STATE>
  static void Finalize(STATE& state, T& target, duckdb::AggregateFinalizeData& finalize_data) {
    if (state.count == 0) {
      finalize_data.ReturnNull();
      return;
    }
    const auto& data = finalize_data.input.bind_data->template Cast<AvgData>();
    const i128 sum = ToI128(state.sum);
    u128 q = 0;
    if (!ScaledQuotient(Magnitude(sum), static_cast<u128>(state.count), data.shift, &q) ||
        q >= Pow10(data.precision)) {
      throw duckdb::OutOfRangeException(
          "[NUMERIC_VALUE_OUT_OF_RANGE] avg: the mean does not fit a DECIMAL of %d digits",
          data.precision);
    }
    const i128 v = sum < 0 ? -static_cast<i128>(q) : static_cast<i128>(q);
    target = Narrow<T>(v);
  }
  static bool IgnoreNull() { return true; }

  static i128 Add(i128 a, i128 b) {
    i128 r;
    if (__builtin_add_overflow(a, b, &r)) {
      throw duckdb::OutOfRangeException(
          "[ARITHMETIC_OVERFLOW] avg: the sum of a DECIMAL overflows");
    }
    return r;
  }
  template <class T>
  static T Narrow(i128 v) {
    if constexpr (std::is_same_v<T, duckdb::hugeint_t>) {
      return FromI128(v);
    } else {
      return static_cast<T>(v);
    }
  }
};

template <class RESULT>
duckdb::AggregateFunction DecimalAvgFunction(const LogicalType& input, const LogicalType& output) {
  return duckdb::AggregateFunction::UnaryAggregate<AvgState, duckdb::hugeint_t, RESULT, DecimalAvg>(
      input, output);
}

unique_ptr<duckdb::FunctionData> BindDecimalAvg(duckdb::ClientContext&,
                                                duckdb::AggregateFunction& function,
                                                duckdb::vector<unique_ptr<Expression>>& arguments) {
  const LogicalType& t = arguments[0]->return_type;
  const int p = duckdb::DecimalType::GetWidth(t), s = duckdb::DecimalType::GetScale(t);
  const int precision = std::min(kMaxPrecision, p + 4), scale = std::min(kMaxPrecision, s + 4);
  const LogicalType input = LogicalType::DECIMAL(kMaxPrecision, s);
  const LogicalType output = LogicalType::DECIMAL(precision, scale);
  const std::string name = function.name;
  switch (output.InternalType()) {
    case duckdb::PhysicalType::INT32:
      function = DecimalAvgFunction<int32_t>(input, output);
      break;
    case duckdb::PhysicalType::INT64:
      function = DecimalAvgFunction<int64_t>(input, output);
      break;
    default:
      function = DecimalAvgFunction<duckdb::hugeint_t>(input, output);
      break;
  }
  function.name = name;
  return duckdb::make_uniq<AvgData>(scale - s, precision);
}

// ---------------------------------------------------------------------------------------------
// sum of integers: the engine's exact HUGEINT sum, but past the range of a BIGINT an error, as
// Spark's BIGINT sum under ANSI (ARITHMETIC_OVERFLOW).

constexpr int kIntegralSums = 4;  // TINYINT, SMALLINT, INTEGER, BIGINT
duckdb::aggregate_finalize_t original_sum_finalize[kIntegralSums] = {};

template <int I>
void CheckedSumFinalize(duckdb::Vector& states, duckdb::AggregateInputData& input,
                        duckdb::Vector& result, duckdb::idx_t count, duckdb::idx_t offset) {
  original_sum_finalize[I](states, input, result, count, offset);
  duckdb::UnifiedVectorFormat data;
  result.ToUnifiedFormat(offset + count, data);
  const auto* sums = duckdb::UnifiedVectorFormat::GetData<duckdb::hugeint_t>(data);
  for (duckdb::idx_t i = offset; i < offset + count; ++i) {
    const duckdb::idx_t k = data.sel->get_index(i);
    if (!data.validity.RowIsValid(k)) continue;
    const i128 v = ToI128(sums[k]);
    if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min()) {
      throw duckdb::OutOfRangeException(
          "[ARITHMETIC_OVERFLOW] sum: the sum of the integers overflows a BIGINT (Spark's ANSI "
          "mode): sum(CAST(x AS DECIMAL(38, 0))) sums past it");
    }
  }
}

constexpr duckdb::aggregate_finalize_t kCheckedSumFinalize[kIntegralSums] = {
    CheckedSumFinalize<0>, CheckedSumFinalize<1>, CheckedSumFinalize<2>, CheckedSumFinalize<3>};

int IntegralSumIndex(LogicalTypeId id) {
  switch (id) {
    case LogicalTypeId::TINYINT:
      return 0;
    case LogicalTypeId::SMALLINT:
      return 1;
    case LogicalTypeId::INTEGER:
      return 2;
    case LogicalTypeId::BIGINT:
      return 3;
    default:
      return -1;
  }
}

void ReplaceDecimalAvg(duckdb::DatabaseInstance& db) {
  duckdb::Connection conn(db);
  conn.context->RunFunctionInTransaction([&]() {
    auto& catalog = duckdb::Catalog::GetSystemCatalog(*conn.context);
    for (const char* name : {"avg", "mean"}) {
      auto& entry = catalog.GetEntry<duckdb::AggregateFunctionCatalogEntry>(*conn.context,
                                                                            DEFAULT_SCHEMA, name);
      bool replaced = false;
      for (auto& f : entry.functions.functions) {
        if (f.arguments.size() == 1 && f.arguments[0].id() == LogicalTypeId::DECIMAL) {
          f.bind = BindDecimalAvg;
          replaced = true;
        }
      }
      if (!replaced) {
        throw duckdb::InternalException("the engine's %s has no DECIMAL overload to replace", name);
      }
    }
    auto& sum = catalog.GetEntry<duckdb::AggregateFunctionCatalogEntry>(*conn.context,
                                                                        DEFAULT_SCHEMA, "sum");
    for (auto& f : sum.functions.functions) {
      if (f.arguments.size() != 1 || f.return_type.id() != LogicalTypeId::HUGEINT) continue;
      const int i = IntegralSumIndex(f.arguments[0].id());
      if (i < 0 || f.finalize == kCheckedSumFinalize[i]) continue;
      original_sum_finalize[i] = f.finalize;
      f.finalize = kCheckedSumFinalize[i];
    }
  });
}

}  // namespace

void RegisterSparkArithmetic(duckdb::DatabaseInstance& db, duckdb::ExtensionLoader& loader) {
  const LogicalType any = LogicalType::ANY;
  duckdb::ScalarFunction divide("spark_divide", {any, any}, any, NeverRuns, KeepTypes);
  divide.bind_expression = DivideExpression;
  duckdb::ScalarFunction remainder("spark_remainder", {any, any}, any, NeverRuns, KeepTypes);
  remainder.bind_expression = RemainderExpression;
  loader.RegisterFunction(divide);
  loader.RegisterFunction(remainder);
  ReplaceDecimalAvg(db);
}

}  // namespace sluice::engine::internal
