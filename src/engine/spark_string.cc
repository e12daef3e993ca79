#include "engine/spark_string.h"

#include <string>

#include "duckdb/main/extension/extension_loader.hpp"
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

duckdb::unique_ptr<duckdb::FunctionData> Bind(
    duckdb::ClientContext&, duckdb::ScalarFunction& bound,
    duckdb::vector<duckdb::unique_ptr<duckdb::Expression>>& arguments) {
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
