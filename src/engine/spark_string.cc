#include "engine/spark_string.h"

#include <string>

#include "duckdb/common/vector_operations/unary_executor.hpp"
#include "duckdb/main/extension/extension_loader.hpp"
#include "engine/spark_casts.h"
#include "engine/standalone_db.h"

namespace sluice::engine::internal {
namespace {

// The offset of the first byte of s[0, n) that does not start a valid UTF-8 sequence (n when
// all do): a character is 1 to 4 bytes and no proper prefix of one is valid.
size_t FirstInvalidByte(const char* s, size_t n) {
  size_t at = 0;
  while (at < n) {
    size_t length = 1;
    while (length <= 4 && at + length <= n && !IsValidUtf8(s + at, length)) ++length;
    if (length > 4 || at + length > n) return at;
    at += length;
  }
  return n;
}

std::string Hex(const char* s, size_t n) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  const size_t shown = n > 64 ? 64 : n;
  for (size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  if (shown < n) out += "... (" + std::to_string(n) + " bytes)";
  return out;
}

// BLOB -> VARCHAR: the same bytes once every value is valid UTF-8 (no copy).
void BlobToString(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::Vector& input = args.data[0];
  duckdb::UnifiedVectorFormat format;
  input.ToUnifiedFormat(args.size(), format);
  const auto* values = duckdb::UnifiedVectorFormat::GetData<duckdb::string_t>(format);
  for (duckdb::idx_t i = 0; i < args.size(); ++i) {
    const duckdb::idx_t at = format.sel->get_index(i);
    if (!format.validity.RowIsValid(at)) continue;
    const duckdb::string_t& v = values[at];
    if (IsValidUtf8(v.GetData(), v.GetSize())) continue;
    throw duckdb::InvalidInputException(
        "CAST(binary AS STRING): the value X'%s' is not valid UTF-8 (byte %llu): Spark keeps such "
        "bytes in a STRING, Sluice's strings must be UTF-8. Select hex(...) or the binary value "
        "itself, or filter the rows out first",
        Hex(v.GetData(), v.GetSize()),
        static_cast<unsigned long long>(FirstInvalidByte(v.GetData(), v.GetSize())));
  }
  result.Reinterpret(input);
}

// Every other type: the argument was cast to VARCHAR by the binder (see Bind).
void PassThrough(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  result.Reference(args.data[0]);
}

// VARCHAR -> BLOB: the UTF-8 bytes of the text (no copy).
void StringToBlob(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  result.Reinterpret(args.data[0]);
}

duckdb::unique_ptr<duckdb::FunctionData> BindBinary(
    duckdb::ClientContext&, duckdb::ScalarFunction& bound,
    duckdb::vector<duckdb::unique_ptr<duckdb::Expression>>& arguments) {
  const duckdb::LogicalTypeId id = arguments[0]->return_type.id();
  if (id == duckdb::LogicalTypeId::VARCHAR) {
    bound.arguments[0] = duckdb::LogicalType::VARCHAR;
    bound.function = StringToBlob;
  } else {
    bound.arguments[0] = duckdb::LogicalType::BLOB;  // the binder adds DuckDB's cast (or refuses)
    bound.function = PassThrough;
  }
  return nullptr;
}

// DOUBLE, FLOAT and the nested types: Spark's text of each value (engine/spark_casts.h).
void SparkTextOf(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::Vector& input = args.data[0];
  for (duckdb::idx_t i = 0; i < args.size(); ++i) {
    duckdb::Value v = input.GetValue(i);
    if (v.IsNull()) {
      duckdb::FlatVector::SetNull(result, i, true);
      continue;
    }
    duckdb::FlatVector::GetData<duckdb::string_t>(result)[i] =
        duckdb::StringVector::AddString(result, SparkText(v));
  }
  if (args.AllConstant()) result.SetVectorType(duckdb::VectorType::CONSTANT_VECTOR);
}

// TIMESTAMP WITH TIME ZONE: DuckDB's text in the session time zone without its offset ('+00').
void WithoutOffset(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::UnaryExecutor::Execute<duckdb::string_t, duckdb::string_t>(
      args.data[0], result, args.size(), [&](duckdb::string_t s) {
        const std::string text = s.GetString();
        const size_t space = text.find(' ');
        const size_t sign = text.find_last_of("+-");
        const size_t end = space != std::string::npos && sign != std::string::npos && sign > space
                               ? sign
                               : text.size();
        return duckdb::StringVector::AddString(result, text.data(), end);
      });
}

bool HasZonedTimestamp(const duckdb::LogicalType& type) {
  if (type.id() == duckdb::LogicalTypeId::TIMESTAMP_TZ) return true;
  switch (type.id()) {
    case duckdb::LogicalTypeId::LIST:
      return HasZonedTimestamp(duckdb::ListType::GetChildType(type));
    case duckdb::LogicalTypeId::ARRAY:
      return HasZonedTimestamp(duckdb::ArrayType::GetChildType(type));
    case duckdb::LogicalTypeId::MAP:
      return HasZonedTimestamp(duckdb::MapType::KeyType(type)) ||
             HasZonedTimestamp(duckdb::MapType::ValueType(type));
    case duckdb::LogicalTypeId::STRUCT:
      for (const auto& f : duckdb::StructType::GetChildTypes(type)) {
        if (HasZonedTimestamp(f.second)) return true;
      }
      return false;
    default:
      return false;
  }
}

duckdb::unique_ptr<duckdb::FunctionData> Bind(
    duckdb::ClientContext& context, duckdb::ScalarFunction& bound,
    duckdb::vector<duckdb::unique_ptr<duckdb::Expression>>& arguments) {
  const duckdb::LogicalType& type = arguments[0]->return_type;
  switch (type.id()) {
    case duckdb::LogicalTypeId::DOUBLE:
    case duckdb::LogicalTypeId::FLOAT:
    case duckdb::LogicalTypeId::LIST:
    case duckdb::LogicalTypeId::ARRAY:
    case duckdb::LogicalTypeId::MAP:
    case duckdb::LogicalTypeId::STRUCT:
      if (type.id() != duckdb::LogicalTypeId::DOUBLE && type.id() != duckdb::LogicalTypeId::FLOAT &&
          HasZonedTimestamp(type) && !SessionIsUtc(context)) {
        throw duckdb::BinderException(
            "CAST(x AS STRING) of a %s holding timestamps needs the session time zone UTC; "
            "SET TimeZone = 'UTC' or cast the timestamps to STRING first",
            SparkTypeName(type));
      }
      bound.arguments[0] = type;
      bound.function = SparkTextOf;
      return nullptr;
    case duckdb::LogicalTypeId::TIMESTAMP_TZ:
      bound.arguments[0] = duckdb::LogicalType::VARCHAR;  // DuckDB's text in the session zone
      bound.function = WithoutOffset;
      return nullptr;
    default:
      break;
  }
  if (arguments[0]->return_type.id() == duckdb::LogicalTypeId::BLOB) {
    bound.arguments[0] = duckdb::LogicalType::BLOB;
    bound.function = BlobToString;
  } else {
    bound.arguments[0] = duckdb::LogicalType::VARCHAR;  // the binder adds the cast
    bound.function = PassThrough;
  }
  return nullptr;
}

}  // namespace

void RegisterSparkString(duckdb::DatabaseInstance& db) {
  duckdb::ScalarFunction fn(kSparkStringFunction, {duckdb::LogicalType::ANY},
                            duckdb::LogicalType::VARCHAR, PassThrough, Bind);
  duckdb::ScalarFunction binary(kSparkBinaryFunction, {duckdb::LogicalType::ANY},
                                duckdb::LogicalType::BLOB, PassThrough, BindBinary);
  duckdb::ExtensionLoader loader(db, "sluice");
  loader.RegisterFunction(fn);
  loader.RegisterFunction(binary);
}

}  // namespace sluice::engine::internal
