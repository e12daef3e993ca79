// QueryStore: what the monitoring server knows about each streaming query of the process
// (docs/operations.md): per query id, its recent progress (a bounded ring, newest last), status,
// trigger, last error and counters. Fed by MonitorListener (monitor_listener.h) from the
// listener bus thread; read by the HTTP handlers on the server's threads.
//
// Status: kActive after a start; kIdle when active and no batch ended for idle_after_ms (or twice
// the trigger interval when that is longer) or after an idle event, until the next batch;
// kTerminated after a clean end; kFailed after an end with an error; kRestarting once the
// runner has scheduled a restart of a failed run (OnRestarting). A new start of the same query id
// (a new run id) makes it kActive again and keeps its counters, ring and last error.
//
// Falling behind (FallingBehind below), reported for active queries only: processed rows/s <
// input rows/s in each of the last kFallingBehindBatches batches that had input, or the last
// batch lasted longer than the trigger interval (> 0).
//
// Thread safety: every method is thread-safe (one mutex guards all state); Snapshot and Progress
// return copies, so callers never hold the lock while formatting. Lock discipline: the public
// methods take the mutex (SLUICE_EXCLUDES); the private helpers run with it held
// (SLUICE_REQUIRES); the records are SLUICE_GUARDED_BY it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/mutex.h"
#include "stream/progress.h"

namespace sluice::server {

enum class QueryStatus { kActive, kIdle, kTerminated, kFailed, kRestarting };
// "active", "idle", "terminated", "failed", "restarting".
std::string_view QueryStatusName(QueryStatus status);
inline constexpr QueryStatus kAllQueryStatuses[] = {QueryStatus::kActive, QueryStatus::kIdle,
                                                    QueryStatus::kTerminated, QueryStatus::kFailed,
                                                    QueryStatus::kRestarting};

// Batches in a row with processed < input rate that make a query "falling behind".
inline constexpr size_t kFallingBehindBatches = 3;

// An error as the page shows it: the message, and its context chain (the message split at the
// ": " that Status::WithContext inserts, outermost context first, the root cause last).
struct QueryError {
  std::string message;
  std::vector<std::string> contexts;
};
QueryError MakeQueryError(const std::string& message);

// A copy of one query's record.
struct QuerySnapshot {
  std::string id, run_id;
  std::optional<std::string> name;
  QueryStatus status = QueryStatus::kActive;
  std::string trigger;  // Trigger::ToString(), e.g. "ProcessingTime(1000 ms)"; "" unknown
  int64_t trigger_interval_ms = 0;
  std::optional<stream::StreamingQueryProgress> last_progress;
  int64_t num_batches_total = 0;     // batches seen in this process
  int64_t num_input_rows_total = 0;  // summed over those batches
  // The sink's numOutputRows summed over those batches; nullopt while no batch reported one
  // (a foreachBatch sink reports -1, unknown, as in Spark).
  std::optional<int64_t> num_output_rows_total;
  int64_t failures_total = 0;  // runs that ended with an error
  // Per operator index: numRowsDroppedByWatermark summed over the batches seen.
  std::map<size_t, int64_t> rows_dropped_by_watermark_total;
  // Per source index: numRescuedRows summed over the batches seen.
  std::map<size_t, int64_t> rescued_rows_total;
  // eventTime.max of the latest batch that had one (no-data batches have none); "" before.
  std::string max_event_time;
  std::optional<QueryError> error;  // the last error of a run of this query; kept after a restart
  bool falling_behind = false;
  std::string falling_behind_reason;  // empty when not falling behind
};

// Falling behind over `recent` (oldest first); returns the reason, or nullopt.
std::optional<std::string> FallingBehind(const std::deque<stream::StreamingQueryProgress>& recent,
                                         int64_t trigger_interval_ms);

struct QueryStoreOptions {
  size_t max_progress_per_query = 300;  // the ring's size
  // An active query without a batch for this long is idle (Spark's noDataProgressEventInterval).
  int64_t idle_after_ms = 10000;
};

class QueryStore {
 public:
  explicit QueryStore(QueryStoreOptions options = {});

  // The trigger of a query (from the runner; the listener events do not carry it).
  void SetTrigger(const std::string& id, std::string trigger_text, int64_t interval_ms);
  // Events. now_ms is the wall clock when the event is applied (tests pass their own).
  void OnStarted(const std::string& id, const std::string& run_id,
                 const std::optional<std::string>& name, int64_t now_ms);
  void OnProgress(const stream::StreamingQueryProgress& progress, int64_t now_ms);
  void OnIdle(const std::string& id, const std::string& run_id);
  void OnTerminated(const std::string& id, const std::string& run_id,
                    const std::optional<std::string>& error);
  // The failed run `run_id` will be restarted (supervised runs): kFailed -> kRestarting. May come
  // before that run's OnTerminated (which then sets kRestarting instead of kFailed).
  void OnRestarting(const std::string& id, const std::string& run_id);

  // Every query, in the order they were first seen, as of now_ms.
  std::vector<QuerySnapshot> Snapshot(int64_t now_ms) const;
  // The query's last `limit` progresses, oldest first; nullopt for an unknown id.
  std::optional<std::vector<stream::StreamingQueryProgress>> Progress(const std::string& id,
                                                                      size_t limit) const;
  size_t max_progress_per_query() const { return options_.max_progress_per_query; }

 private:
  struct Record {
    QuerySnapshot info;  // last_progress, falling_behind* and status idle are derived on read
    std::deque<stream::StreamingQueryProgress> recent;
    int64_t last_activity_ms = 0;  // start or last batch end
    bool idle_event = false;       // an idle event since the last batch
    std::string restarting_run;    // OnRestarting's run id
  };
  Record& Get(const std::string& id) SLUICE_REQUIRES(mu_);  // creates
  QuerySnapshot MakeSnapshot(const Record& r, int64_t now_ms) const;

  const QueryStoreOptions options_;
  mutable Mutex mu_;
  std::vector<std::string> order_ SLUICE_GUARDED_BY(mu_);
  std::map<std::string, Record> records_ SLUICE_GUARDED_BY(mu_);
};

}  // namespace sluice::server
