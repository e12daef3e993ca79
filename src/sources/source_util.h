// Small helpers shared by the sources: SQL quoting and schema-shaped empty batches.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::sources {

// "a BIGINT, b VARCHAR": a schema for messages.
std::string SchemaToText(const engine::Schema& schema);
// engine::EmptyBatch(schema) (`conn` unused): the SQL front end's callers still use this
// spelling; new code calls engine::EmptyBatch.
Result<engine::Batch> EmptyBatch(engine::Connection* conn, const engine::Schema& schema);
// The newest version of the Delta table at `table_path`, capped at `cap` when set (the
// Trigger.AvailableNow snapshot). NotFound, naming `description`, when the log has no commits.
Result<int64_t> LatestTableVersion(fs::FileSystem* fs, const std::string& table_path,
                                   const std::string& description, std::optional<int64_t> cap);
// True when both schemas have the same column names (case-insensitive) and types, in order.
bool SameSchema(const engine::Schema& a, const engine::Schema& b);
// True when every column of `data` exists in `reader` (case-insensitive) with the same type:
// rows written with `data` can be read with `reader` (new columns read as NULL).
bool ReadCompatible(const engine::Schema& data, const engine::Schema& reader);

}  // namespace sluice::sources
