// Shared pieces of Delta DML and maintenance (dml_delete.h, dml_update.h, dml_merge.h,
// optimize.h, restore.h, vacuum.h): the table handle they work on, result/metrics types,
// conservative file pruning from SQL conditions, the SQL that reads candidate files with their
// log path, remove actions, and the commit step.
//
// Copy-on-write model: an operation reads the latest snapshot through a Transaction of the
// writer, prunes candidate files (partition values and stats, data_skipping.h), finds with one
// DuckDB query which candidate files really hold affected rows, rewrites only those (new files
// via DeltaTableWriter::WriteFiles) and commits their removes + the new adds (+ cdc files,
// cdc_writer.h) in one commit. Every expression is evaluated by DuckDB.
//
// Thread safety: a DmlTable (its Connection) is used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ids.h"
#include "common/result.h"
#include "delta/actions.h"
#include "delta/commit.h"
#include "delta/data_skipping.h"
#include "delta/scan.h"
#include "delta/snapshot.h"
#include "delta/table_writer.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::delta {

// What a DML/maintenance operation works on. All members are borrowed (the writer, engine and
// connection must outlive the call); the connection runs the operation's queries and gets
// temporary views named "__sluice_*" registered during the call.
struct DmlTable {
  DeltaTableWriter* writer = nullptr;
  std::shared_ptr<fs::FileSystem> fs;
  engine::Engine* engine = nullptr;
  engine::Connection* conn = nullptr;
};

struct DmlOptions {
  // The name conditions and expressions may use to qualify target columns ("t.x"). Empty:
  // columns can only be used unqualified.
  std::string target_alias;
  // Test hook: runs after the operation has written its files and just before it commits
  // (e.g. to let a concurrent writer win the race). An error aborts the operation.
  std::function<Status()> before_commit;
  // Clock for remove.deletionTimestamp (ms since epoch). Null: system clock.
  std::function<int64_t()> now_ms;
  // Idempotent streaming writes (a MERGE by the Delta sink in Update mode): recorded as a txn
  // action in the operation's commit, so that commit and txn are one atomic step. The caller
  // checks Snapshot::TxnVersion first to skip a batch already written.
  std::optional<SetTransaction> txn;
};

struct DmlResult {
  // The committed version; nullopt when the operation changed nothing and committed nothing.
  std::optional<Version> version;
  // commitInfo.operationMetrics as committed (Spark's names, e.g. numDeletedRows).
  std::map<std::string, int64_t> metrics;
  std::vector<std::string> removed_files;  // log paths of removed (rewritten or dropped) files
  std::vector<std::string> added_files;    // log paths of added data files
  std::vector<std::string> cdc_files;      // log paths of cdc files
};

// Name of the extra column holding each row's file (log path) in candidate reads.
inline constexpr char kFileColumn[] = "__sluice_log_path";

// A conservative pruning filter from a SQL boolean `condition`: the top-level AND conjuncts of
// the simple forms `col op literal`, `literal op col`, `col IS [NOT] NULL` (op one of = == <> !=
// < <= > >=; numbers for numeric columns, quoted strings for the others). `col` may be qualified
// by `alias` (and must be when `require_qualifier`, e.g. in a MERGE ON condition where an
// unqualified name may be a source column). Anything else (including any top-level OR)
// contributes nothing, so the filter keeps every file that may hold a matching row.
ScanFilter ExtractPruningFilter(std::string_view condition, const engine::Schema& schema,
                                std::string_view alias, bool require_qualifier = false);

// The top-level AND conjuncts of `condition` (outside parentheses and quotes); nullopt when it
// has a top-level OR or unbalanced parentheses/quotes.
std::optional<std::vector<std::string>> SplitTopLevelAnd(std::string_view condition);

// Name of the extra column holding each row's 0-based position in its data file (the index
// deletion vectors use), in candidate reads that ask for it.
inline constexpr char kRowIndexColumn[] = "__sluice_row_index";

// The SQL reading `files` of `snapshot` (table columns in schema order plus kFileColumn, and
// kRowIndexColumn when `with_row_index`). A file's deletion vector is applied: the rows it
// deletes are not read (deletion_vector.h), so a rewrite never brings them back.
Result<std::string> CandidateReadSql(const DmlTable& table, const Snapshot& snapshot,
                                     const std::vector<AddFile>& files,
                                     bool with_row_index = false);

// Comma-separated quoted table columns, each prefixed by `qualifier` + "." when not empty.
std::string ColumnList(const engine::Schema& schema, std::string_view qualifier = "");

// The alias to use for the target relation in SQL ("__target" when `alias` is empty).
std::string TargetAlias(std::string_view alias);

// The column of `schema` named `name` case-insensitively, after stripping an `alias.` qualifier;
// InvalidArgument naming the column otherwise.
Result<const engine::Field*> ResolveColumn(const engine::Schema& schema, std::string_view name,
                                           std::string_view alias);

// Per live file: whether `predicate` (SQL over partition columns only) holds for its partition
// values. nullopt when the predicate does not bind on partition columns alone (it references
// data columns or is invalid); then `bind_error` (optional) gets DuckDB's message.
Result<std::optional<std::vector<bool>>> EvaluateOnPartitions(
    engine::Connection* conn, const Snapshot& snapshot, const std::vector<AddFile>& files,
    std::string_view predicate, std::string_view alias, std::string* bind_error = nullptr);

// Writes `rows` (table columns) through the writer in slices of at most `max_rows_per_file`
// rows (DeltaTableWriter::WriteFiles writes one file per partition per call), so that a
// rewrite keeps files about the size of the ones it replaces. <= 0: one call.
Result<std::vector<AddFile>> WriteRowsInFiles(const DmlTable& table, Transaction* txn,
                                              const engine::Batch& rows, int64_t max_rows_per_file);

// Rows per rewritten file: the largest numRecords among `files` (1,000,000 when none is known).
int64_t RowsPerFile(const std::vector<AddFile>& files);

// A remove action for a live file (with its deletion vector: the entry removed is (path, DV)).
RemoveFile RemoveFor(const AddFile& add, int64_t deletion_timestamp_ms, bool data_change);

// numRecords from add.stats (the rows in the data file, deleted ones included), or nullopt.
std::optional<int64_t> NumRecords(const AddFile& add);

// The rows of the file that are live: numRecords minus its deletion vector's cardinality.
std::optional<int64_t> LiveRows(const AddFile& add);

// Current time per `options`.
int64_t DmlNow(const DmlOptions& options);

// "<operation> on Delta table <path> at version <v>".
std::string DmlContext(std::string_view operation, const Snapshot& snapshot);

// JSON text of a string (for operationParameters).
std::string JsonString(std::string_view s);

// Sets operation/metrics, runs options.before_commit, and commits through the writer (which
// runs the post-commit checkpoint). The cdc actions' files are recorded as written by `txn`.
// When the commit fails with Conflict, or the before_commit hook fails, the files `txn` wrote
// (Transaction::written_files: rewritten data files and cdc files) are deleted, and only those:
// files that `txn` re-adds from the table's history (RESTORE) are never touched.
// A transaction without actions is not committed (result.version stays nullopt) unless
// `commit_empty` is set (VACUUM START/END, RESTORE to the current state).
Result<DmlResult> CommitDml(const DmlTable& table, Transaction* txn, const DmlOptions& options,
                            const std::string& operation,
                            const std::map<std::string, std::string>& parameters_json,
                            const std::map<std::string, int64_t>& metrics,
                            bool commit_empty = false);

// Runs `sql` with context.
Result<engine::Batch> QueryCtx(engine::Connection* conn, const std::string& sql,
                               const std::string& ctx);

}  // namespace sluice::delta
