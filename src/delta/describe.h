// DESCRIBE HISTORY / DESCRIBE DETAIL / DESCRIBE of a Delta table as engine Batches (built by one
// DuckDB query over VALUES), with Delta's column names.
//
// History (newest first): version BIGINT, timestamp TIMESTAMPTZ (commit timestamp), userId,
// userName, operation VARCHAR, operationParameters MAP(VARCHAR, VARCHAR), job, notebook,
// clusterId VARCHAR, readVersion BIGINT, isolationLevel VARCHAR, isBlindAppend BOOLEAN,
// operationMetrics MAP(VARCHAR, VARCHAR), userMetadata VARCHAR, engineInfo VARCHAR. Values come
// from commitInfo (non-string JSON values are shown as JSON text); columns it lacks are NULL,
// and a commit without commitInfo has NULL everywhere except version and timestamp.
// Detail (one row): format, id, name, description, location, createdAt TIMESTAMPTZ,
// lastModified TIMESTAMPTZ, partitionColumns VARCHAR[], clusteringColumns VARCHAR[], numFiles
// BIGINT, sizeInBytes BIGINT, properties MAP(VARCHAR, VARCHAR), minReaderVersion INTEGER,
// minWriterVersion INTEGER, tableFeatures VARCHAR[].
// Describe: col_name, data_type (Spark's type names: bigint, int, string, decimal(10,2),
// array<int>, struct<a:int>, map<string,int>...), comment (the field's "comment" metadata); a
// partitioned table gets Spark's "# Partition Information" section after the columns.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "common/result.h"
#include "delta/table.h"
#include "engine/engine.h"

namespace sluice::delta {

Result<engine::Batch> DescribeHistory(DeltaTable* table, engine::Connection* conn,
                                      std::optional<size_t> limit = std::nullopt);
Result<engine::Batch> DescribeDetail(DeltaTable* table, engine::Connection* conn);
Result<engine::Batch> DescribeColumns(DeltaTable* table, engine::Connection* conn);

// Spark's simpleString of a Delta schemaString type (a JSON value: "long", {"type":"struct",...}).
std::string SparkTypeName(const std::string& type_json);
// Each top-level column's Spark simpleString type (SparkTypeName), by column name, from a Delta
// schemaString (the logical names); empty when the text is not a struct's JSON.
std::map<std::string, std::string> SparkColumnTypes(const std::string& schema_string);
// Spark's DDL spelling (DataType.sql) of a Delta schemaString type: BIGINT, STRING,
// DECIMAL(10,2), ARRAY<INT>, MAP<STRING, INT>, STRUCT<a: INT COMMENT 'x', `b c`: STRING>.
std::string SparkTypeDdl(const std::string& type_json);
// A column or field name as Spark's DDL writes it: as is when letters, digits and '_' (not all
// digits), else in backquotes (QuotingUtils.quoteIfNeeded).
std::string SparkQuoteIfNeeded(const std::string& name);
// A string literal as Spark's DDL writes it: in single quotes, ' and \ escaped with \.
std::string SparkQuoteString(const std::string& text);

}  // namespace sluice::delta
