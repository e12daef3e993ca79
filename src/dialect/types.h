// Spark's type spellings in the engine's words, for CAST targets, :: and from_json schemas:
//
//   Spark                       engine
//   STRING, VARCHAR(n), CHAR(n) VARCHAR
//   BINARY                      BLOB
//   BYTE / SHORT / LONG         TINYINT / SMALLINT / BIGINT
//   TIMESTAMP_NTZ               TIMESTAMP (a local date-time)
//   ARRAY<T>                    T[]
//   MAP<K, V>                   MAP(K, V)
//   STRUCT<a: T, b U>           STRUCT(a T, b U)
//   anything else               as written (INT, DOUBLE, DECIMAL(10, 2), DATE, ...)
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "dialect/tokenizer.h"

namespace sluice::dialect {

// Where the converted type goes: an engine type (a CAST's target), or the schema text of
// sources/schema_text.h, which reads TIMESTAMP_NTZ itself (TIMESTAMP there is an instant).
enum class TypeTarget { kEngine, kSchemaText };

// Reads one Spark type starting at tokens[*i] and advances *i past it. InvalidArgument ("a
// type", "'>'") naming what was expected and what was found.
Result<std::string> ConvertType(const std::vector<Token>& tokens, size_t* i,
                                TypeTarget target = TypeTarget::kEngine);

// "name type, name type" (a DDL schema such as from_json's) with the engine's types; names are
// quoted. `in_struct` accepts STRUCT<>'s "name: type".
Result<std::string> ConvertFields(const std::vector<Token>& tokens, size_t* i, bool in_struct,
                                  TypeTarget target = TypeTarget::kEngine);

}  // namespace sluice::dialect
