// Parsing a user schema such as 'id BIGINT, ts TIMESTAMP, tags ARRAY<STRING>'-like DuckDB text
// ("name TYPE, ..."; names may be "quoted"). Types are DuckDB type names, with Spark's meaning
// for the timestamp names at the top level: TIMESTAMP is an instant (TIMESTAMPTZ, Delta
// "timestamp"), TIMESTAMP_NTZ a local date-time (DuckDB TIMESTAMP); STRING, LONG, INT work as
// aliases. The types are resolved by the engine (CAST(NULL AS type)).
#pragma once

#include <string_view>

#include "common/result.h"
#include "engine/engine.h"

namespace sluice::sources {

// InvalidArgument naming `option` (e.g. "schema") and the bad part.
Result<engine::Schema> ParseSchemaText(engine::Connection* conn, std::string_view text,
                                       std::string_view option);

// Schema <-> JSON text [{"name":..,"type":"<duckdb type>"},...] for persisted schemas.
std::string SchemaToJson(const engine::Schema& schema);
Result<engine::Schema> SchemaFromJson(std::string_view json);

}  // namespace sluice::sources
