// Sluice's column types: a mirror of the DuckDB types Sluice uses, so that no layer above
// src/engine needs DuckDB headers. Delta's schemaString types map onto these (src/delta).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace sluice::engine {

struct Field;

enum class TypeId : uint8_t {
  kNull,  // the type of an untyped NULL literal
  kBoolean,
  kTinyInt,   // int8
  kSmallInt,  // int16
  kInteger,   // int32
  kBigInt,    // int64
  kHugeInt,   // int128
  kFloat,
  kDouble,
  kDecimal,  // precision, scale
  kVarchar,
  kBlob,
  kDate,
  kTime,
  kTimestamp,    // microseconds, no time zone (Delta timestamp_ntz)
  kTimestampTz,  // microseconds, UTC instant (Delta/Spark timestamp)
  kInterval,
  kUuid,
  kStruct,  // children: named fields
  kList,    // children[0]: element (name "element")
  kMap,     // children[0]: key (name "key"), children[1]: value (name "value")
  kOther,   // any other DuckDB type; sql holds its text
};

struct DataType {
  TypeId id = TypeId::kNull;
  uint8_t precision = 0;        // kDecimal only
  uint8_t scale = 0;            // kDecimal only
  std::vector<Field> children;  // kStruct, kList, kMap
  std::string other_sql;        // kOther only: DuckDB's type text

  // DuckDB type text, e.g. "BIGINT", "DECIMAL(10,2)", "STRUCT(\"a\" INTEGER, b VARCHAR[])",
  // "MAP(VARCHAR, INTEGER)", "INTEGER[]".
  std::string ToSql() const;
  // Parses DuckDB type text (the inverse of ToSql). InvalidArgument on unknown types.
  static Result<DataType> FromSql(std::string_view sql);

  bool operator==(const DataType& other) const;
};

struct Field {
  std::string name;
  DataType type;
  bool nullable = true;  // the engine reports true for every column and child it produces

  bool operator==(const Field& other) const = default;
};

using Schema = std::vector<Field>;

// True for the integer, floating-point and decimal types.
bool IsNumeric(TypeId id);

}  // namespace sluice::engine
