// Delta's schemaString (Spark StructType JSON) <-> sluice::engine::Schema.
//
// Type mapping: string->VARCHAR, long->BIGINT, integer->INTEGER, short->SMALLINT,
// byte->TINYINT, float->FLOAT, double->DOUBLE, decimal(p,s)->DECIMAL(p,s), boolean->BOOLEAN,
// binary->BLOB, date->DATE, timestamp->TIMESTAMPTZ (UTC instant), timestamp_ntz->TIMESTAMP,
// void->NULL type, struct->STRUCT, array->LIST (containsNull = element nullability),
// map->MAP (valueContainsNull = value nullability). `variant` and unknown types are
// NotSupported naming the type and column.
//
// engine::Field has no metadata, so field metadata (column comments, column mapping ids,
// generation expressions...) is returned beside the schema, keyed by the field's path.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/result.h"
#include "engine/types.h"

namespace sluice::delta {

// Field path ("a", "a.b", "arr.element.c", "m.value") -> the field's metadata JSON object text.
// Only fields whose metadata is a non-empty object appear.
using FieldMetadata = std::map<std::string, std::string>;

struct DeltaSchema {
  engine::Schema fields;
  FieldMetadata metadata;
};

// Parses a schemaString. Corruption for malformed JSON or shapes; NotSupported for types
// Sluice cannot represent.
Result<DeltaSchema> ParseSchemaString(std::string_view schema_json);

// The schemaString for `schema` (compact JSON, Spark's key order: name, type, nullable,
// metadata). `metadata` supplies per-field metadata (default: {}). InvalidArgument for engine
// types Delta cannot store (e.g. HUGEINT, INTERVAL).
Result<std::string> SchemaToJson(const engine::Schema& schema, const FieldMetadata& metadata = {});

// Delta's name for a primitive type ("long", "decimal(10,2)", ...); InvalidArgument for nested
// or unsupported types.
Result<std::string> DeltaPrimitiveName(const engine::DataType& type);
// The engine type of a Delta primitive name; NotSupported for unknown names.
Result<engine::DataType> ParseDeltaPrimitive(std::string_view name);

// Finds the top-level field `name` case-insensitively (Delta column names are
// case-insensitive); nullptr when absent.
const engine::Field* FindField(const engine::Schema& schema, std::string_view name);

}  // namespace sluice::delta
