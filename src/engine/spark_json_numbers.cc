#include "engine/spark_json_numbers.h"

#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "duckdb/execution/expression_executor.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/planner/expression.hpp"

namespace sluice::engine::internal {
namespace {

using duckdb::idx_t;
using duckdb::LogicalType;
using duckdb::LogicalTypeId;
using duckdb::Vector;

bool IsStrictLeaf(const LogicalType& t) {
  switch (t.id()) {
    case LogicalTypeId::BOOLEAN:
    case LogicalTypeId::TINYINT:
    case LogicalTypeId::SMALLINT:
    case LogicalTypeId::INTEGER:
    case LogicalTypeId::BIGINT:
    case LogicalTypeId::FLOAT:
    case LogicalTypeId::DOUBLE:
    case LogicalTypeId::DECIMAL:
      return true;
    default:
      return false;
  }
}

bool NeedsConversion(const LogicalType& t) {
  if (IsStrictLeaf(t)) return true;
  switch (t.id()) {
    case LogicalTypeId::STRUCT:
      for (const auto& child : duckdb::StructType::GetChildTypes(t)) {
        if (NeedsConversion(child.second)) return true;
      }
      return false;
    case LogicalTypeId::LIST:
    case LogicalTypeId::MAP:
      return NeedsConversion(duckdb::ListType::GetChildType(t));
    default:
      return false;
  }
}

// A JSON integer token: [-]digits.
bool IsIntegerToken(std::string_view s) {
  size_t i = !s.empty() && s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

bool IsNumberToken(std::string_view s) {
  return !s.empty() && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'));
}

// Spark's non-numeric numbers (allowNonNumericNumbers), as JSON strings.
bool NonNumeric(std::string_view s, double* out) {
  if (s == "\"NaN\"") {
    *out = std::numeric_limits<double>::quiet_NaN();
  } else if (s == "\"Infinity\"" || s == "\"+Infinity\"" || s == "\"INF\"" || s == "\"+INF\"") {
    *out = std::numeric_limits<double>::infinity();
  } else if (s == "\"-Infinity\"" || s == "\"-INF\"") {
    *out = -std::numeric_limits<double>::infinity();
  } else {
    return false;
  }
  return true;
}

template <class T>
bool ReadIntegral(std::string_view s, T* out) {
  if (!IsIntegerToken(s)) return false;
  int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return false;
  if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) return false;
  *out = static_cast<T>(v);
  return true;
}

bool ReadDouble(std::string_view s, double* out) {
  if (NonNumeric(s, out)) return true;
  if (!IsNumberToken(s)) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// The JSON tokens of `src` (VARCHAR) read as `dst`'s type; failed[i] for a token that is not
// NULL and cannot be read.
void ConvertLeaf(Vector& src, Vector& dst, idx_t count, std::vector<bool>* failed) {
  src.Flatten(count);
  const auto* in = duckdb::FlatVector::GetData<duckdb::string_t>(src);
  const auto& in_valid = duckdb::FlatVector::Validity(src);
  auto& out_valid = duckdb::FlatVector::Validity(dst);
  const LogicalType& type = dst.GetType();
  for (idx_t i = 0; i < count; ++i) {
    if (!in_valid.RowIsValid(i)) {
      out_valid.SetInvalid(i);
      continue;
    }
    const std::string_view s(in[i].GetData(), in[i].GetSize());
    bool ok = false;
    switch (type.id()) {
      case LogicalTypeId::BOOLEAN:
        ok = s == "true" || s == "false";
        if (ok) duckdb::FlatVector::GetData<bool>(dst)[i] = s == "true";
        break;
      case LogicalTypeId::TINYINT:
        ok = ReadIntegral(s, &duckdb::FlatVector::GetData<int8_t>(dst)[i]);
        break;
      case LogicalTypeId::SMALLINT:
        ok = ReadIntegral(s, &duckdb::FlatVector::GetData<int16_t>(dst)[i]);
        break;
      case LogicalTypeId::INTEGER:
        ok = ReadIntegral(s, &duckdb::FlatVector::GetData<int32_t>(dst)[i]);
        break;
      case LogicalTypeId::BIGINT:
        ok = ReadIntegral(s, &duckdb::FlatVector::GetData<int64_t>(dst)[i]);
        break;
      case LogicalTypeId::DOUBLE:
        ok = ReadDouble(s, &duckdb::FlatVector::GetData<double>(dst)[i]);
        break;
      case LogicalTypeId::FLOAT: {
        double d = 0;
        ok = ReadDouble(s, &d);
        if (ok) duckdb::FlatVector::GetData<float>(dst)[i] = static_cast<float>(d);
        break;
      }
      case LogicalTypeId::DECIMAL: {
        if (!IsNumberToken(s)) break;
        duckdb::Value v{std::string(s)};
        if (v.DefaultTryCastAs(type)) {
          dst.SetValue(i, v);
          ok = true;
        }
        break;
      }
      default:
        throw duckdb::InternalException("spark_json_numbers: no reading for %s", type.ToString());
    }
    if (!ok) {
      out_valid.SetInvalid(i);
      (*failed)[i] = true;
    }
  }
}

// `src` read as `dst`'s type. A value that fails (failed[i]) is NULL: a leaf that cannot be read,
// an array or a map with such an element (Spark's parser fails the whole field); a struct keeps
// its other fields (Spark's partial results) and does not fail.
void Convert(Vector& src, Vector& dst, idx_t count, std::vector<bool>* failed) {
  const LogicalType& type = dst.GetType();
  if (src.GetType() == type || !NeedsConversion(type)) {
    dst.Reference(src);
    return;
  }
  if (IsStrictLeaf(type)) {
    if (src.GetType().InternalType() != duckdb::PhysicalType::VARCHAR) {
      throw duckdb::InternalException("spark_json_numbers: %s where JSON text was expected",
                                      src.GetType().ToString());
    }
    ConvertLeaf(src, dst, count, failed);
    return;
  }
  src.Flatten(count);
  dst.SetVectorType(duckdb::VectorType::FLAT_VECTOR);
  duckdb::FlatVector::Validity(dst).Copy(duckdb::FlatVector::Validity(src), count);
  switch (type.id()) {
    case LogicalTypeId::STRUCT: {
      auto& from = duckdb::StructVector::GetEntries(src);
      auto& to = duckdb::StructVector::GetEntries(dst);
      std::vector<bool> field_failed(count);
      for (size_t k = 0; k < to.size(); ++k) Convert(*from[k], *to[k], count, &field_failed);
      return;
    }
    case LogicalTypeId::LIST:
    case LogicalTypeId::MAP: {
      std::memcpy(duckdb::FlatVector::GetData<duckdb::list_entry_t>(dst),
                  duckdb::FlatVector::GetData<duckdb::list_entry_t>(src),
                  count * sizeof(duckdb::list_entry_t));
      const idx_t n = duckdb::ListVector::GetListSize(src);
      duckdb::ListVector::Reserve(dst, n);
      std::vector<bool> element_failed(n);
      Convert(duckdb::ListVector::GetEntry(src), duckdb::ListVector::GetEntry(dst), n,
              &element_failed);
      duckdb::ListVector::SetListSize(dst, n);
      const auto* entries = duckdb::FlatVector::GetData<duckdb::list_entry_t>(dst);
      auto& valid = duckdb::FlatVector::Validity(dst);
      for (idx_t i = 0; i < count; ++i) {
        if (!valid.RowIsValid(i)) continue;
        for (idx_t j = entries[i].offset; j < entries[i].offset + entries[i].length; ++j) {
          if (element_failed[j]) {
            valid.SetInvalid(i);
            (*failed)[i] = true;
            break;
          }
        }
      }
      return;
    }
    default:
      throw duckdb::InternalException("spark_json_numbers: unexpected type %s", type.ToString());
  }
}

void JsonNumbers(duckdb::DataChunk& args, duckdb::ExpressionState&, Vector& result) {
  std::vector<bool> failed(args.size());
  Convert(args.data[0], result, args.size(), &failed);
}

duckdb::unique_ptr<duckdb::FunctionData> BindJsonNumbers(
    duckdb::ClientContext& context, duckdb::ScalarFunction& bound,
    duckdb::vector<duckdb::unique_ptr<duckdb::Expression>>& arguments) {
  if (!arguments[1]->IsFoldable()) {
    throw duckdb::BinderException("spark_json_numbers: the type must be a constant");
  }
  const std::string type_text =
      duckdb::ExpressionExecutor::EvaluateScalar(context, *arguments[1]).ToString();
  bound.arguments[0] = arguments[0]->return_type;
  bound.return_type = duckdb::TransformStringToLogicalType(type_text, context);
  return nullptr;
}

}  // namespace

void RegisterSparkJsonNumbers(duckdb::ExtensionLoader& loader) {
  duckdb::ScalarFunction f("spark_json_numbers", {LogicalType::ANY, LogicalType::VARCHAR},
                           LogicalType::ANY, JsonNumbers, BindJsonNumbers);
  loader.RegisterFunction(f);
}

}  // namespace sluice::engine::internal
