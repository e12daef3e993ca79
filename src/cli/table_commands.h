// `sluice table history|detail|vacuum|optimize PATH|NAME` (docs/operations.md "Table maintenance
// commands"): Delta table inspection and maintenance from the shell, through the delta layer's
// DESCRIBE HISTORY / DESCRIBE DETAIL / VACUUM / OPTIMIZE (delta/describe.h, vacuum.h,
// optimize.h: the same code as the SQL statements). Human-readable by default, --json for scripts.
//
// - history [--limit N]: per commit, newest first: version, timestamp (UTC), operation, its
//   parameters and a summary of its metrics (row and file counts); --json: every commit's
//   DESCRIBE HISTORY row as a JSON object (maps as objects), in an array.
// - detail: format, id, name, location, created/last modified, partition columns, number of
//   files, size, properties, min reader/writer versions, table features; --json: the DESCRIBE
//   DETAIL row as an object.
// - vacuum [--retain HOURS] [--dry-run] [--force]: deletes (or lists, with --dry-run) the files
//   no version within the retention needs. Retention: --retain, default the table's
//   delta.deletedFileRetentionDuration (7 days = 168 h unless the table sets it); a shorter one
//   is refused (Delta's retentionDurationCheck) unless --force.
// - optimize [--where PREDICATE]: bin-packing compaction (partition-column predicate only);
//   prints what was compacted and the new version, or that there was nothing to compact.
//
// The table is a directory, or when no directory of that name exists, the table of that name in
// the warehouse (--warehouse, default ./warehouse; a table created with LOCATION is found at its
// location).
// Errors (exit 1, "Error: ..." on `err`): neither a directory nor a warehouse table of that
// name, a directory without a _delta_log ("... is not a Delta table"), and whatever the delta
// layer refuses.
//
// Thread safety: one call at a time per stream.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace sluice::cli {

struct TableCommandOptions {
  // The table: its directory, or the name of a table of `warehouse` (used when no such
  // directory exists).
  std::string path;
  std::string warehouse = "warehouse";
  bool json = false;
  std::optional<int64_t> limit;        // history
  std::optional<double> retain_hours;  // vacuum
  bool dry_run = false;                // vacuum
  bool force = false;                  // vacuum: skip the retention check
  std::optional<std::string> where;    // optimize
};

int RunTableHistory(const TableCommandOptions& options, std::ostream& out, std::ostream& err);
int RunTableDetail(const TableCommandOptions& options, std::ostream& out, std::ostream& err);
int RunTableVacuum(const TableCommandOptions& options, std::ostream& out, std::ostream& err);
int RunTableOptimize(const TableCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace sluice::cli
