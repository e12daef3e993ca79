// Change data feed reading (PROTOCOL.md "Change Data Files", Spark CDCReader): the row changes
// of versions [start, end] with _change_type, _commit_version and _commit_timestamp.
//
// Per commit: when it has cdc actions, only its cdc files are read (their rows carry
// _change_type: insert, update_preimage, update_postimage, delete); otherwise every add with
// dataChange=true yields its rows as "insert" and every remove with dataChange=true yields its
// rows as "delete". Commits that only rearrange data (dataChange=false) add nothing.
// _commit_timestamp is the commit timestamp of time_travel.h (monotonized file time, or the
// in-commit timestamp). The output columns are the latest version's schema, as Spark's batch
// read of the feed gives them (a column added after `end` is NULL in every row), plus the three
// columns; ChangesSchema::kEndVersion gives the end version's schema instead (the streaming
// change feed source, which keeps its own schema per batch range).
//
// Errors, as Spark: start beyond the latest version; end before start; CDF not enabled
// (delta.enableChangeDataFeed) at some version of the range; commits of the range cleaned up.
// `end` beyond the latest version is capped at the latest version.
#pragma once

#include <optional>

#include "common/ids.h"
#include "common/result.h"
#include "delta/log_segment.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::delta {

inline constexpr const char* kChangeTypeColumn = "_change_type";
inline constexpr const char* kCommitVersionColumn = "_commit_version";
inline constexpr const char* kCommitTimestampColumn = "_commit_timestamp";

// Whose schema the rows of ReadChanges have.
enum class ChangesSchema { kLatest, kEndVersion };

Result<engine::Batch> ReadChanges(fs::FileSystem* fs, engine::Connection* conn,
                                  const LogListing& listing, Version start,
                                  std::optional<Version> end,
                                  ChangesSchema schema = ChangesSchema::kLatest);

}  // namespace sluice::delta
