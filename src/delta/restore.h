// RESTORE TABLE t TO VERSION AS OF v | TIMESTAMP AS OF ts: one commit (operation "RESTORE") that
// makes the latest snapshot's files equal to those of the old version: the old version's files
// missing now are re-added (their add actions as logged then, dataChange=true), and the files
// live now but not in the old version are removed (dataChange=true). The old metadata (schema,
// properties) is restored when it differs; the protocol is never downgraded.
// operationParameters {version, timestamp}; operationMetrics numRestoredFiles,
// numRemovedFiles, restoredFilesSize, removedFilesSize, tableSizeAfterRestore,
// numOfFilesAfterRestore. A RESTORE to the current state still commits (as Delta does).
// Errors: InvalidArgument for a version after the latest; NotFound when the version's log was
// cleaned up or any file to re-add is missing (VACUUMed), naming the files; nothing is committed.
#pragma once

#include <cstdint>
#include <optional>

#include "common/ids.h"
#include "common/result.h"
#include "delta/dml_util.h"

namespace sluice::delta {

struct RestoreTarget {
  std::optional<Version> version;       // VERSION AS OF
  std::optional<int64_t> timestamp_ms;  // TIMESTAMP AS OF (used when version is empty)
};

Result<DmlResult> RestoreTable(const DmlTable& table, const RestoreTarget& target,
                               const DmlOptions& options = {});

}  // namespace sluice::delta
