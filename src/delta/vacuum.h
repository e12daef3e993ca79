// VACUUM t [RETAIN n HOURS] [DRY RUN] (Spark's VacuumCommand, full mode).
//
// Deletes the files under the table directory that the latest snapshot does not reference and
// that are older than the retention: a file is kept when it is a live file, when it is
// tombstoned (removed) with deletionTimestamp within the retention, or when its modification
// time is within the retention (it may belong to a commit in progress). Retention defaults to
// delta.deletedFileRetentionDuration (7 days); a shorter RETAIN is refused unless
// VacuumOptions::retention_duration_check is false (SET sluice.delta.retentionDurationCheck =
// false), with Spark's message.
//
// Never touched: `_delta_log` and every path whose first component starts with '_' (e.g.
// `_checkpoints` of streaming queries), except `_change_data`, whose cdc files are vacuumed like
// data files once older than the retention (cdc actions are not kept in snapshots, so only age
// protects them; CDF reads of versions older than the retention then fail, as in Delta); and
// every hidden file or directory (a component starting with '.'). Empty directories are left.
//
// DRY RUN lists the files it would delete and commits nothing. A real run commits
// commitInfo-only entries "VACUUM START" (operationParameters retentionCheckEnabled,
// specifiedRetentionMillis, defaultRetentionMillis; metrics numFilesToDelete, sizeOfDataToDelete)
// and "VACUUM END" (operationParameters status "COMPLETED"; metrics numDeletedFiles,
// numVacuumedDirectories), as Delta does with vacuum logging on.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/result.h"
#include "delta/dml_util.h"

namespace sluice::delta {

struct VacuumOptions {
  std::optional<double> retain_hours;  // RETAIN n HOURS; default: the table's retention
  bool dry_run = false;
  // Refuse a retention shorter than delta.deletedFileRetentionDuration.
  bool retention_duration_check = true;
  // Clock (ms since epoch) for the cutoff. Null: system clock.
  std::function<int64_t()> now_ms;
};

struct VacuumResult {
  std::vector<std::string> files;  // storage paths deleted (or, for a dry run, to delete), sorted
  int64_t bytes = 0;
  std::optional<Version> start_version;  // VACUUM START commit (not for a dry run)
  std::optional<Version> end_version;    // VACUUM END commit
};

Result<VacuumResult> Vacuum(const DmlTable& table, const VacuumOptions& options = {});

}  // namespace sluice::delta
