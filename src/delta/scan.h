// Reading table data through the engine: one SQL query over DuckDB's read_parquet for a set of
// files, producing the table's columns in schema order.
//
// Per file: partition columns become typed constants decoded from the log's partitionValues
// (never from the path; under column mapping keyed by physical names, as the files' columns);
// columns missing from a file (schema evolution) are NULL; extra columns in files (e.g.
// _change_type) are dropped; every column is cast to its table type (INT96 and other timestamps
// become TIMESTAMPTZ in UTC). Hive partition detection is off.
//
// Deletion vectors: a file's `row_filter` (row indexes from its deletion vector, see
// deletion_vector.h) drops those rows (read_parquet's file_row_number checked against the
// ranges by the engine's sluice_row_listed), or with `keep_only_filtered` keeps only them (the
// change data feed's rows deleted by a new DV).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "delta/actions.h"
#include "delta/data_skipping.h"
#include "delta/deletion_vector.h"
#include "delta/snapshot.h"
#include "engine/engine.h"

namespace sluice::delta {

struct FileToRead {
  std::string path;                       // storage path (already resolved and decoded)
  PartitionValues partition_values;       // from the log
  std::vector<std::string> extra_values;  // SQL expressions, one per ReadSpec::extra_columns
  // Row indexes (0-based positions in the file) to drop, or to keep only when
  // keep_only_filtered; null: every row.
  std::shared_ptr<const RowIndexSet> row_filter = nullptr;
  bool keep_only_filtered = false;
};

// The FileToRead of `add` in the table at `table_root`: the resolved path, its partition values
// and, when it carries a deletion vector, the rows it deletes (loaded through `dvs`).
Result<FileToRead> FileToReadForAdd(DeletionVectorLoader* dvs, const std::string& table_root,
                                    const AddFile& add, std::vector<std::string> extra_values = {});

struct ReadSpec {
  engine::Schema schema;  // output columns (table schema order)
  // Column mapping: `schema` under physical names (column_mapping.h), the same fields in the
  // same order; the files' columns and partition values are found by these names. Empty: the
  // names of `schema`. Fill both with ReadSpecForTable.
  engine::Schema physical_schema;
  // Column mapping mode id: field id -> physical name. The files' Parquet field ids are checked
  // against it (a file whose field id names another column is refused: Sluice reads by name).
  std::map<int64_t, std::string> field_ids;
  std::vector<std::string> partition_columns;  // logical names (metaData.partitionColumns)
  // Columns appended after the schema columns, valued per file by FileToRead::extra_values.
  std::vector<engine::Field> extra_columns;
  // Extra columns that, when their per-file value is NULL, take the file's own column of the
  // same name (cdc files carry _change_type).
  std::vector<std::string> extra_from_file;
  std::string where_sql = "TRUE";  // applied to the output columns
  // When not empty: a BIGINT column of this name after the extra columns, each row's 0-based
  // position in its data file (read_parquet's file_row_number, the index deletion vectors use).
  std::string row_index_column;
};

// The ReadSpec of a table's own columns: its logical schema, partition columns and, under
// column mapping (name or id), its physical schema. Corruption when a mapped field lacks its
// physical name; NotSupported for an unknown mapping mode.
Result<ReadSpec> ReadSpecForTable(const DeltaSchema& schema, const Metadata& metadata);

// The SQL that reads `files` per `spec`. Probes the files' columns with the engine.
Result<std::string> BuildReadSql(engine::Connection* conn, const ReadSpec& spec,
                                 const std::vector<FileToRead>& files);

// Runs BuildReadSql and returns the rows.
Result<engine::Batch> ReadFiles(engine::Connection* conn, const ReadSpec& spec,
                                const std::vector<FileToRead>& files);

// The live files of `snapshot` that may hold rows matching `filter` (partition and stats
// pruning), in path order. Reads each file's parsed stats kept with the snapshot's entry
// (parsed on the entry's first use, then shared by every statement and later snapshot).
Result<std::vector<AddFile>> PlanScanFiles(const Snapshot& snapshot, const ScanFilter& filter);

// The SQL (a SELECT) that reads the rows of `snapshot` matching `filter`: what SQL queries over
// the table run (the SQL front end makes it a view named after the table). The SQL is
// self-contained: deleted row indexes of deletion vectors are literals in it.
Result<std::string> ScanSnapshotSql(engine::Connection* conn, fs::FileSystem* fs,
                                    const Snapshot& snapshot, const ScanFilter& filter = {});

// Reads the rows of `snapshot` matching `filter`, reading deletion vector files through `fs`
// (the table's file system). When `files_read` is not null it receives
// the files that were read (after pruning).
Result<engine::Batch> ScanSnapshot(engine::Connection* conn, fs::FileSystem* fs,
                                   const Snapshot& snapshot, const ScanFilter& filter,
                                   std::vector<AddFile>* files_read = nullptr);

}  // namespace sluice::delta
