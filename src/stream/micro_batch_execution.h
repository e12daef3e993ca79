// MicroBatchExecution: Spark's micro-batch loop (docs/micro-batch-loop.md: its steps, triggers,
// restarts and progress).
//
// Per batch N: latestOffset per source (with the read limit) -> offsets/<N> (durable) ->
// CrashPoint("after_offsets_write") -> GetBatch per source -> plan (state N -> N+1) ->
// CrashPoint("after_state_commit") -> observe -> sink.AddBatch(N) -> CrashPoint("after_sink_write")
// -> commits/<N> -> CrashPoint("after_commit_write") -> source.Commit -> purge -> progress.
// A trigger that finds no new data constructs no batch and uses no id.
//
// Start() does everything that can be refused synchronously (trigger, checkpoint metadata and
// lock, sources and their identities, restart decision, plan and sink), then runs the loop on
// its own thread. On restart, a batch whose offsets/<N> has no commits/<N> is re-run with
// exactly its recorded offsets, watermark and timestamp, and the sink sees the same id.
//
// Ownership: the execution owns its sources and plan, shares the sink, the file system, the
// clock and the listener bus; `engine` must outlive it.
// Thread safety: every public method may be called from any thread (the loop runs on the query
// thread; accessors read state under a mutex). Lock discipline: mu_ guards what the accessors
// read (SLUICE_GUARDED_BY below) and is held only to copy it in or out, never across a batch, a
// source, sink or listener call; the query-thread state is the query thread's alone.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/mutex.h"
#include "common/result.h"
#include "engine/engine.h"
#include "fs/file_system.h"
#include "plan/incremental_plan.h"
#include "sinks/sink.h"
#include "sluice/query_types.h"
#include "sources/source.h"
#include "stream/checkpoint_lock.h"
#include "stream/commit_log.h"
#include "stream/listener_bus.h"
#include "stream/offset_seq_log.h"
#include "stream/progress.h"
#include "stream/restart_plan.h"
#include "stream/shared_watermark.h"
#include "stream/trigger.h"
#include "stream/watermark_tracker.h"

namespace sluice::stream {

// The plan interface the loop drives lives in the plan layer.
using plan::EventTimeStats;
using plan::IncrementalPlan;
using plan::PlanContext;
using plan::PlanInput;
using plan::PlanOutput;
using plan::SqlPlan;
using plan::WatermarkNode;

// The crash points of a batch, in the order a batch reaches them (fs::CrashPoint: the file
// system's MaybeCrash, SET sluice.test.crashAt, SLUICE_CRASH_AT and SLUICE_TEST_FAIL_AT).
inline constexpr const char* kCrashAfterOffsetsWrite = "after_offsets_write";
inline constexpr const char* kCrashAfterStateCommit = "after_state_commit";
inline constexpr const char* kCrashAfterSinkWrite = "after_sink_write";
inline constexpr const char* kCrashAfterCommitWrite = "after_commit_write";

// One streaming source of the query (source i = sources/<i>).
struct SourceSpec {
  // Creates the source; gets fs, engine, clock, <root>/sources/<i> and `options`.
  std::function<Result<std::unique_ptr<sources::Source>>(const sources::SourceContext&)> factory;
  std::map<std::string, std::string> options;
  // maxFilesPerTrigger / maxBytesPerTrigger / maxOffsetsPerTrigger for this source.
  sources::ReadLimit read_limit;
  // What the checkpoint records to detect a changed source (sources/identity); empty: the
  // source's Description().
  std::string identity;
};

// What a sink factory gets: the sink must be bound to this query (the Delta sink's txn appId is
// the query id).
struct SinkContext {
  std::string query_id, run_id, checkpoint_root;
  std::shared_ptr<fs::FileSystem> fs;
  engine::Engine* engine = nullptr;
};
using SinkFactory = std::function<Result<std::shared_ptr<sinks::Sink>>(const SinkContext&)>;
// A factory that always returns `sink` (tests; the MemorySink).
SinkFactory FixedSink(std::shared_ptr<sinks::Sink> sink);

// observe(name, exprs): aggregate SQL expressions evaluated over each batch's output rows (as
// `SELECT <exprs> FROM <output>`), reported in progress observedMetrics[name].
struct Observation {
  std::string name;
  std::vector<std::string> exprs;  // e.g. {"count(*) AS rows", "max(id) AS max_id"}
};

struct ExecutionOptions {
  std::string checkpoint_root;            // required
  std::optional<std::string> query_name;  // progress "name"
  Trigger trigger;                        // Default
  sluice::OutputMode output_mode = sluice::OutputMode::kAppend;
  engine::Engine* engine = nullptr;    // required; outlives the execution
  std::shared_ptr<fs::FileSystem> fs;  // null: the local file system
  // null: the system clock. Trigger slots, batch timestamps and the idle backoff wait on it (a
  // ManualClock without auto-advance blocks idle waits until the test advances it).
  std::shared_ptr<Clock> clock;
  std::shared_ptr<ListenerBus> listener_bus;  // null: no listeners
  // The persisted conf of a fresh checkpoint, and the keys the user set explicitly
  // (restart_plan.h).
  ConfMap session_conf = DefaultPersistedConf();
  std::set<std::string> explicit_conf_keys;
  int64_t min_batches_to_retain = kDefaultMinBatchesToRetain;
  bool sync = true;  // fsync offsets/commits (tests may turn it off)
  // SET sluice.test.crashAt: wraps `fs` in a FaultInjectingFileSystem armed at this point, so the
  // first batch reaching it stops dead ("injected crash at <point>"), as a killed process would.
  std::optional<std::string> test_crash_at;
  // Idle trigger polling (default trigger): the first wait, doubled per idle trigger up to max.
  int64_t idle_backoff_initial_ms = kPollingDelayMs;
  int64_t idle_backoff_max_ms = 100;
  // Idle progress is reported at most this often (Spark's noDataProgressEventInterval).
  int64_t no_data_progress_interval_ms = 10000;
  // Run a batch without new data when the plan asks for one (WantsNoDataBatch), so that a moved
  // watermark evicts state and emits rows (Spark's spark.sql.streaming.noDataMicroBatches.enabled;
  // SET sluice.noDataBatches). False: such rows wait for the next batch that has new data.
  bool no_data_batches = true;
  std::vector<Observation> observations;
  // Handed to the plan (PlanContext::prepare_connection): readies static relations per batch.
  std::function<Status(engine::Connection&)> prepare_connection;
  // Per-watermark-node watermarks of an earlier run of this query in the same process (what
  // NodeWatermarksMs() returned when it ended); empty or of another size: none. Spark keeps
  // them only in memory, so a streaming table hands them from one REFRESH to the next.
  std::vector<std::optional<int64_t>> initial_node_watermarks_ms;
  // Called on the query thread after each batch's progress is made (not for idle triggers),
  // before the next trigger starts; e.g. to persist it. Must not block for long.
  std::function<void(const StreamingQueryProgress&)> on_batch_progress;
  // Group mode (scaleout/): the watermark shared with the other tasks of the query
  // (stream/shared_watermark.h says when the loop asks and tells it). Null: the query's own.
  std::shared_ptr<SharedWatermark> shared_watermark;
};

class MicroBatchExecution {
 public:
  // Refuses: Continuous trigger (NotSupported with advice), missing engine/root/sink, a
  // checkpoint held by another query (Conflict naming the holder), a changed number or identity
  // of sources or a changed persisted conf (InvalidArgument saying a new checkpoint is needed),
  // and whatever the sources, plan and sink refuse. On success the query thread is running.
  static Result<std::unique_ptr<MicroBatchExecution>> Start(ExecutionOptions options,
                                                            std::vector<SourceSpec> sources,
                                                            std::unique_ptr<IncrementalPlan> plan,
                                                            SinkFactory sink_factory);
  // Stops (at a batch boundary) and joins.
  ~MicroBatchExecution();
  MicroBatchExecution(const MicroBatchExecution&) = delete;
  MicroBatchExecution& operator=(const MicroBatchExecution&) = delete;

  const std::string& id() const { return query_id_; }
  const std::string& run_id() const { return run_id_; }
  const std::optional<std::string>& name() const { return options_.query_name; }
  // How the run started (fresh, re-run of an uncommitted batch, next batch).
  const RestartPlan& restart_plan() const { return restart_; }

  bool IsActive() const;
  StreamingQueryStatus CurrentStatus() const;  // Spark's StreamingQuery.status
  // Asks the loop to stop at the next batch boundary, waits for it and releases the checkpoint.
  // OK also when the query already ended (its error stays in Exception()).
  Status Stop();
  // Blocks until the query ends; its error, if it failed.
  Status AwaitTermination();
  // As above with a timeout: true when it ended, false on timeout; the error if it failed.
  Result<bool> AwaitTermination(int64_t timeout_ms);
  // Blocks until a trigger that started after this call found no new data (everything available
  // then is processed), or the query ended (its error, if any).
  Status ProcessAllAvailable();
  // The error that ended the query, with context (query, batch id, source).
  std::optional<Status> Exception() const;

  std::optional<StreamingQueryProgress> LastProgress() const;
  // The last 100 progresses, oldest first.
  std::vector<StreamingQueryProgress> RecentProgress() const;
  // The id the next constructed batch gets.
  BatchId NextBatchId() const;
  // The global watermark the next batch runs with.
  int64_t CurrentWatermarkMs() const;
  // Per watermark node (plan order): max event time - delay seen in this run (or restored from
  // ExecutionOptions::initial_node_watermarks_ms), nullopt for a node that saw no data.
  std::vector<std::optional<int64_t>> NodeWatermarksMs() const;
  // The file system the query writes through (the FaultInjectingFileSystem with test_crash_at).
  const std::shared_ptr<fs::FileSystem>& file_system() const { return fs_; }

  static constexpr size_t kMaxRecentProgress = 100;

 private:
  struct SourceState {
    std::unique_ptr<sources::Source> source;
    sources::ReadLimit limit;
    std::optional<std::string> start;   // committed offset (start of the next batch)
    std::optional<std::string> latest;  // last LatestOffset result (progress latestOffset)
  };
  struct BatchTimings;

  explicit MicroBatchExecution(ExecutionOptions options);
  Status Open(std::vector<SourceSpec> sources, std::unique_ptr<IncrementalPlan> plan,
              SinkFactory sink_factory);
  void RunQueryThread();
  // One trigger: true to continue.
  Result<bool> RunTrigger();
  Status RunBatch(BatchId id, const std::vector<std::optional<std::string>>& ends,
                  int64_t watermark_ms, int64_t timestamp_ms, bool no_data_batch,
                  int64_t trigger_start_ms, BatchTimings* timings);
  Result<std::map<std::string, nlohmann::ordered_json>> Observe(const engine::Batch& rows);
  void ReportIdle(int64_t trigger_start_ms);
  void AddProgress(StreamingQueryProgress p, bool post_event = true);
  void SetStatus(std::string message, bool data_available, bool trigger_active);
  void IdleSleep();
  void Post(ListenerBus::Event event);

  ExecutionOptions options_;
  std::shared_ptr<fs::FileSystem> fs_;
  std::shared_ptr<Clock> clock_;
  std::string query_id_, run_id_;
  int64_t start_time_ms_ = 0;
  std::unique_ptr<CheckpointLock> lock_;
  std::unique_ptr<OffsetSeqLog> offsets_;
  std::unique_ptr<CommitLog> commits_;
  RestartPlan restart_;
  std::vector<SourceState> sources_;
  std::unique_ptr<IncrementalPlan> plan_;
  std::shared_ptr<sinks::Sink> sink_;
  std::unique_ptr<engine::Connection> conn_;  // empty batches, observe
  std::optional<WatermarkTracker> watermarks_;
  std::unique_ptr<TriggerExecutor> executor_;
  bool single_batch_ = false;  // Once, or AvailableNow fallen back
  bool available_now_ = false;
  sources::ReadLimit forced_limit_;  // all_available for Once

  // Query-thread state.
  bool pending_rerun_ = false;
  bool last_batch_wants_no_data_ = false;
  int64_t previous_watermark_ms_ = 0;
  int64_t last_trigger_start_ms_ = -1;
  int64_t last_idle_progress_ms_ = -1;
  int64_t idle_backoff_ms_ = 0;
  std::optional<BatchId> purged_below_;  // log entries below it are purged (log_purge.h)
  std::atomic<bool> stop_{false};

  mutable Mutex mu_;
  CondVar cv_;  // signalled on an idle trigger, a progress and the termination
  BatchId next_batch_id_ SLUICE_GUARDED_BY(mu_){0};
  int64_t watermark_ms_ SLUICE_GUARDED_BY(mu_) = 0;
  std::vector<std::optional<int64_t>> node_watermarks_ms_ SLUICE_GUARDED_BY(mu_);
  StreamingQueryStatus status_ SLUICE_GUARDED_BY(mu_);
  std::deque<StreamingQueryProgress> recent_ SLUICE_GUARDED_BY(mu_);
  std::optional<Status> exception_ SLUICE_GUARDED_BY(mu_);
  std::map<std::string, std::string> secret_options_;  // the sources' secret options, to redact
  bool terminated_ SLUICE_GUARDED_BY(mu_) = false;
  int64_t trigger_seq_ SLUICE_GUARDED_BY(mu_) = 0;  // triggers started
  // The latest trigger that found no data.
  int64_t last_idle_trigger_seq_ SLUICE_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace sluice::stream
