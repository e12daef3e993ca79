// Reading table data through the engine: one SQL query over DuckDB's read_parquet for a set of
// files, producing the table's columns in schema order.
//
// Per file: partition columns become typed constants decoded from the log's partitionValues
// (never from the path); columns missing from a file (schema evolution) are NULL; extra
// columns in files (e.g. _change_type) are dropped; every column is cast to its table type
// (INT96 and other timestamps become TIMESTAMPTZ in UTC). Hive partition detection is off.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "delta/actions.h"
#include "delta/data_skipping.h"
#include "delta/snapshot.h"
#include "engine/engine.h"

namespace sluice::delta {

struct FileToRead {
  std::string path;                       // storage path (already resolved and decoded)
  PartitionValues partition_values;       // from the log
  std::vector<std::string> extra_values;  // SQL expressions, one per ReadSpec::extra_columns
};

struct ReadSpec {
  engine::Schema schema;  // output columns (table schema order)
  std::vector<std::string> partition_columns;
  // Columns appended after the schema columns, valued per file by FileToRead::extra_values.
  std::vector<engine::Field> extra_columns;
  // Extra columns that, when their per-file value is NULL, take the file's own column of the
  // same name (cdc files carry _change_type).
  std::vector<std::string> extra_from_file;
  std::string where_sql = "TRUE";  // applied to the output columns
};

// The SQL that reads `files` per `spec`. Probes the files' columns with the engine.
Result<std::string> BuildReadSql(engine::Connection* conn, const ReadSpec& spec,
                                 const std::vector<FileToRead>& files);

// Runs BuildReadSql and returns the rows.
Result<engine::Batch> ReadFiles(engine::Connection* conn, const ReadSpec& spec,
                                const std::vector<FileToRead>& files);

// The live files of `snapshot` that may hold rows matching `filter` (partition and stats
// pruning), in path order.
Result<std::vector<AddFile>> PlanScanFiles(const Snapshot& snapshot, const ScanFilter& filter);

// The SQL (a SELECT) that reads the rows of `snapshot` matching `filter`: what SQL queries over
// the table run (the SQL front end makes it a view named after the table).
Result<std::string> ScanSnapshotSql(engine::Connection* conn, const Snapshot& snapshot,
                                    const ScanFilter& filter = {});

// Reads the rows of `snapshot` matching `filter`. When `files_read` is not null it receives
// the files that were read (after pruning).
Result<engine::Batch> ScanSnapshot(engine::Connection* conn, const Snapshot& snapshot,
                                   const ScanFilter& filter,
                                   std::vector<AddFile>* files_read = nullptr);

}  // namespace sluice::delta
