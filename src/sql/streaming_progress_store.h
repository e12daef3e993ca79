// The progress of a streaming table's micro-batches, kept with its checkpoint so that
// `streaming_progress('name')` survives restarts (docs/sql-reference.md "Watching streams").
//
// Each batch that runs (no-data batches included; idle triggers write nothing) writes its
// StreamingQueryProgress JSON (stream/progress.h, Spark's field names) to
// <checkpoint>/progress/<batchId>.json, replacing the file when a batch is re-run after a crash.
//
// streaming_progress('name') in a query is rewritten to a relation with one row per file, ordered
// by batch id, and the columns
//   batch_id BIGINT, timestamp TIMESTAMPTZ, num_input_rows BIGINT,
//   input_rows_per_second DOUBLE, processed_rows_per_second DOUBLE, batch_duration_ms BIGINT,
//   watermark TIMESTAMPTZ (eventTime.watermark; NULL when the query has no watermark),
//   state_rows_total, state_rows_updated, state_rows_removed, state_rows_dropped_by_watermark,
//   state_memory_bytes BIGINT (sums over stateOperators), progress JSON (the whole progress).
//
// Thread safety: pure functions over the file system.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "fs/file_system.h"
#include "stream/progress.h"

namespace sluice::sql {

// <checkpoint_root>/progress/<batch_id>.json
Status WriteBatchProgress(fs::FileSystem& fs, const std::string& checkpoint_root,
                          const stream::StreamingQueryProgress& progress);

// The progress JSON texts under <checkpoint_root>/progress, in batch id order (none when the
// directory does not exist). A damaged file (empty, cut short, not a progress object, a batchId
// other than its name's, unreadable) is skipped with a warning naming the file and what is wrong,
// never an error: progress is a report, and one bad file must not break SHOW STREAMING TABLES or
// streaming_progress() (docs/formats/progress.md, "Torn tail"). The warnings are also appended
// to `skipped` when given. Errors only when the directory cannot be listed.
// A group-mode root (`sluice run --group`, docs/scale-out.md) has no batches of its own: its
// tasks' progress (<root>/tasks/<p>/progress) follows the root's, task by task in partition
// order, each in batch id order (a task's progress `name` is "<table>[<p>]").
Result<std::vector<std::string>> ReadBatchProgress(fs::FileSystem& fs,
                                                   const std::string& checkpoint_root,
                                                   std::vector<std::string>* skipped = nullptr);

// A SELECT giving the streaming_progress columns above for `progress_jsons`. Corruption naming
// `what` when a text is not a progress JSON object.
Result<std::string> ProgressRowsSql(const std::vector<std::string>& progress_jsons,
                                    const std::string& what);

// One streaming_progress('name') call in a query.
struct ProgressReference {
  std::string name;       // the table name as written
  std::string view_name;  // "progress:<name>": the relation the rewritten query reads
};
struct ProgressRewrite {
  std::string sql;
  std::vector<ProgressReference> references;
  // The query reads `(SHOW STREAMING TABLES)`, rewritten to the relation kShowStreamingTablesView.
  bool show_streaming_tables = false;
};
inline constexpr char kShowStreamingTablesView[] = "show:streaming_tables";
// Replaces each `streaming_progress('name')` (outside strings and comments) with the quoted view
// name, and `(SHOW STREAMING TABLES)` with the quoted kShowStreamingTablesView. InvalidArgument
// for streaming_progress without one string argument.
Result<ProgressRewrite> RewriteStreamingProgress(std::string_view sql);

}  // namespace sluice::sql
