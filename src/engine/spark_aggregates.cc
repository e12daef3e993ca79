#include "engine/spark_aggregates.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "duckdb/catalog/catalog.hpp"
#include "duckdb/catalog/catalog_entry/aggregate_function_catalog_entry.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/connection.hpp"
#include "engine/spark_int128.h"

namespace sluice::engine::internal {
namespace {

using duckdb::Expression;
using duckdb::LogicalType;
using duckdb::LogicalTypeId;
using duckdb::unique_ptr;

template <class T>
T Narrow(i128 v) {
  if constexpr (std::is_same_v<T, duckdb::hugeint_t>) {
    return FromI128(v);
  } else {
    return static_cast<T>(v);
  }
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
// sum of TINYINT..BIGINT: BIGINT, the exact sum checked against BIGINT's range at the end.

struct IntegerSumState {
  duckdb::hugeint_t sum;
  bool isset;
};

struct CheckedIntegerSum {
  template <class STATE>
  static void Initialize(STATE& state) {
    state.sum = duckdb::hugeint_t(0);
    state.isset = false;
  }
  // 128 bits hold the sum of 2^63 BIGINTs: the additions cannot overflow.
  template <class INPUT, class STATE, class OP>
  static void Operation(STATE& state, const INPUT& input, duckdb::AggregateUnaryInput&) {
    state.sum = FromI128(ToI128(state.sum) + static_cast<i128>(input));
    state.isset = true;
  }
  template <class INPUT, class STATE, class OP>
  static void ConstantOperation(STATE& state, const INPUT& input, duckdb::AggregateUnaryInput&,
                                duckdb::idx_t count) {
    state.sum = FromI128(ToI128(state.sum) + static_cast<i128>(input) * static_cast<i128>(count));
    state.isset = true;
  }
  template <class STATE, class OP>
  static void Combine(const STATE& source, STATE& target, duckdb::AggregateInputData&) {
    if (!source.isset) return;
    target.sum = FromI128(ToI128(target.sum) + ToI128(source.sum));
    target.isset = true;
  }
  template <class T, class STATE>
  static void Finalize(STATE& state, T& target, duckdb::AggregateFinalizeData& finalize_data) {
    if (!state.isset) {
      finalize_data.ReturnNull();
      return;
    }
    const i128 v = ToI128(state.sum);
    if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min()) {
      throw duckdb::OutOfRangeException(
          "[ARITHMETIC_OVERFLOW] sum: the sum of the integers overflows a BIGINT (Spark's ANSI "
          "mode): sum(CAST(x AS DECIMAL(38, 0))) sums past it");
    }
    target = static_cast<int64_t>(v);
  }
  static bool IgnoreNull() { return true; }
};

template <class INPUT>
duckdb::AggregateFunction IntegerSumFunction(const LogicalType& input) {
  return duckdb::AggregateFunction::UnaryAggregate<IntegerSumState, INPUT, int64_t,
                                                   CheckedIntegerSum>(input, LogicalType::BIGINT);
}

unique_ptr<duckdb::FunctionData> BindIntegerSum(duckdb::ClientContext&,
                                                duckdb::AggregateFunction& function,
                                                duckdb::vector<unique_ptr<Expression>>&) {
  // The overload's own argument type (the binder casts the argument to it).
  const LogicalType input = function.arguments[0];
  const std::string name = function.name;
  switch (input.id()) {
    case LogicalTypeId::TINYINT:
      function = IntegerSumFunction<int8_t>(input);
      break;
    case LogicalTypeId::SMALLINT:
      function = IntegerSumFunction<int16_t>(input);
      break;
    case LogicalTypeId::INTEGER:
      function = IntegerSumFunction<int32_t>(input);
      break;
    default:
      function = IntegerSumFunction<int64_t>(LogicalType::BIGINT);
      break;
  }
  function.name = name;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// sum of DECIMAL(p, s): DECIMAL(min(38, p + 10), s), checked against its precision.

struct DecimalSumState {
  duckdb::hugeint_t sum;
  bool isset;
};

struct DecimalSumData : duckdb::FunctionData {
  DecimalSumData(int precision_p, int scale_p) : precision(precision_p), scale(scale_p) {}
  unique_ptr<duckdb::FunctionData> Copy() const override {
    return duckdb::make_uniq<DecimalSumData>(precision, scale);
  }
  bool Equals(const duckdb::FunctionData& other) const override {
    const auto& o = other.Cast<DecimalSumData>();
    return o.precision == precision && o.scale == scale;
  }
  int precision;  // of the result
  int scale;
};

[[noreturn]] void ThrowDecimalSumOverflow(int precision, int scale) {
  throw duckdb::OutOfRangeException(
      "[NUMERIC_VALUE_OUT_OF_RANGE] sum: the sum of the decimals does not fit its type "
      "DECIMAL(%d,%d) (Spark's ANSI mode)",
      precision, scale);
}

struct CheckedDecimalSum {
  template <class STATE>
  static void Initialize(STATE& state) {
    state.sum = duckdb::hugeint_t(0);
    state.isset = false;
  }
  template <class INPUT, class STATE, class OP>
  static void Operation(STATE& state, const INPUT& input, duckdb::AggregateUnaryInput& in) {
    state.sum = FromI128(Add(ToI128(state.sum), ToI128(input), in.input));
    state.isset = true;
  }
  template <class INPUT, class STATE, class OP>
  static void ConstantOperation(STATE& state, const INPUT& input, duckdb::AggregateUnaryInput& in,
                                duckdb::idx_t count) {
    i128 total;
    if (__builtin_mul_overflow(ToI128(input), static_cast<i128>(count), &total)) {
      Throw(in.input);
    }
    state.sum = FromI128(Add(ToI128(state.sum), total, in.input));
    state.isset = true;
  }
  template <class STATE, class OP>
  static void Combine(const STATE& source, STATE& target, duckdb::AggregateInputData& input) {
    if (!source.isset) return;
    target.sum = FromI128(Add(ToI128(target.sum), ToI128(source.sum), input));
    target.isset = true;
  }
  template <class T, class STATE>
  static void Finalize(STATE& state, T& target, duckdb::AggregateFinalizeData& finalize_data) {
    if (!state.isset) {
      finalize_data.ReturnNull();
      return;
    }
    const auto& data = finalize_data.input.bind_data->template Cast<DecimalSumData>();
    const i128 sum = ToI128(state.sum);
    if (Magnitude(sum) >= Pow10(data.precision))
      ThrowDecimalSumOverflow(data.precision, data.scale);
    target = Narrow<T>(sum);
  }
  static bool IgnoreNull() { return true; }

  [[noreturn]] static void Throw(duckdb::AggregateInputData& input) {
    const auto& data = input.bind_data->Cast<DecimalSumData>();
    ThrowDecimalSumOverflow(data.precision, data.scale);
  }
  static i128 Add(i128 a, i128 b, duckdb::AggregateInputData& input) {
    i128 r;
    if (__builtin_add_overflow(a, b, &r)) Throw(input);
    return r;
  }
};

template <class RESULT>
duckdb::AggregateFunction DecimalSumFunction(const LogicalType& input, const LogicalType& output) {
  return duckdb::AggregateFunction::UnaryAggregate<DecimalSumState, duckdb::hugeint_t, RESULT,
                                                   CheckedDecimalSum>(input, output);
}

unique_ptr<duckdb::FunctionData> BindDecimalSum(duckdb::ClientContext&,
                                                duckdb::AggregateFunction& function,
                                                duckdb::vector<unique_ptr<Expression>>& arguments) {
  const LogicalType& t = arguments[0]->return_type;
  const int p = duckdb::DecimalType::GetWidth(t), s = duckdb::DecimalType::GetScale(t);
  const int precision = std::min(kMaxPrecision, p + 10);
  const LogicalType input = LogicalType::DECIMAL(kMaxPrecision, s);
  const LogicalType output = LogicalType::DECIMAL(precision, s);
  const std::string name = function.name;
  if (output.InternalType() == duckdb::PhysicalType::INT64) {
    function = DecimalSumFunction<int64_t>(input, output);
  } else {
    function = DecimalSumFunction<duckdb::hugeint_t>(input, output);
  }
  function.name = name;
  return duckdb::make_uniq<DecimalSumData>(precision, s);
}

bool IsReplacedIntegerSum(LogicalTypeId id) {
  return id == LogicalTypeId::TINYINT || id == LogicalTypeId::SMALLINT ||
         id == LogicalTypeId::INTEGER || id == LogicalTypeId::BIGINT;
}

}  // namespace

void ReplaceSparkAggregates(duckdb::DatabaseInstance& db) {
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
    int integers = 0, decimals = 0;
    for (auto& f : sum.functions.functions) {
      if (f.arguments.size() != 1) continue;
      const LogicalTypeId id = f.arguments[0].id();
      if (IsReplacedIntegerSum(id)) {
        f.bind = BindIntegerSum;
        f.return_type = LogicalType::BIGINT;
        ++integers;
      } else if (id == LogicalTypeId::DECIMAL) {
        f.bind = BindDecimalSum;
        ++decimals;
      }
    }
    if (integers == 0 || decimals == 0) {
      throw duckdb::InternalException("the engine's sum has no integer or DECIMAL overload");
    }
  });
}

}  // namespace sluice::engine::internal
