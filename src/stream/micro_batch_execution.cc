#include "stream/micro_batch_execution.h"

#include <algorithm>
#include <chrono>

#include "common/clock.h"
#include "common/logging.h"
#include "common/redaction.h"
#include "common/secret_reference.h"
#include "common/strings.h"
#include "common/uuid.h"
#include "engine/registered_batch.h"
#include "fs/crash_point.h"
#include "fs/fault_injection_file_system.h"
#include "plan/observation.h"
#include "stream/checkpoint_layout.h"
#include "stream/checkpoint_metadata.h"
#include "stream/checkpoint_reclaim.h"
#include "stream/log_purge.h"
#include "stream/pending_commit.h"
#include "stream/source_identity.h"
#include "stream/time_format.h"

namespace sluice::stream {

struct MicroBatchExecution::BatchTimings {
  std::map<std::string, int64_t> ms;
  void Add(std::string_view key, int64_t v) { ms[std::string(key)] += v; }
};

namespace {

// An observed value as JSON: numbers stay numbers.
nlohmann::ordered_json CellJson(const engine::Batch& b, size_t col) {
  if (b.num_rows() == 0 || b.IsNull(0, col)) return nullptr;
  switch (b.schema()[col].type.id) {
    case engine::TypeId::kBoolean: {
      auto v = b.GetBool(0, col);
      if (v.ok() && v->has_value()) return **v;
      break;
    }
    case engine::TypeId::kTinyInt:
    case engine::TypeId::kSmallInt:
    case engine::TypeId::kInteger:
    case engine::TypeId::kBigInt: {
      auto v = b.GetInt64(0, col);
      if (v.ok() && v->has_value()) return **v;
      break;
    }
    case engine::TypeId::kFloat:
    case engine::TypeId::kDouble:
    case engine::TypeId::kDecimal: {
      auto v = b.GetDouble(0, col);
      if (v.ok() && v->has_value()) return **v;
      break;
    }
    default:
      break;
  }
  return b.GetString(0, col).value_or("");
}

}  // namespace

SinkFactory FixedSink(std::shared_ptr<sinks::Sink> sink) {
  return [sink](const SinkContext&) -> Result<std::shared_ptr<sinks::Sink>> { return sink; };
}

MicroBatchExecution::MicroBatchExecution(ExecutionOptions options) : options_(std::move(options)) {
  status_ = {"Initializing", false, false};
}

Result<std::unique_ptr<MicroBatchExecution>> MicroBatchExecution::Start(
    ExecutionOptions options, std::vector<SourceSpec> sources,
    std::unique_ptr<IncrementalPlan> plan, SinkFactory sink_factory) {
  std::unique_ptr<MicroBatchExecution> exec(new MicroBatchExecution(std::move(options)));
  // secret(scope, key) option values become the secrets here, as late as possible, so that what
  // is stored (definitions, checkpoints) carries the reference (common/secret_reference.h).
  // Errors never show a source's secret option values (common/redaction.h).
  for (size_t i = 0; i < sources.size(); ++i) {
    SLUICE_ASSIGN_OR_RETURN_CTX(sources[i].options, ResolveSecretReferences(sources[i].options),
                                "source " + std::to_string(i));
    for (const auto& [name, value] : sources[i].options) {
      if (IsSecretOptionName(name)) exec->secret_options_[std::to_string(i) + "." + name] = value;
    }
  }
  Status st = exec->Open(std::move(sources), std::move(plan), std::move(sink_factory));
  if (!st.ok()) {
    if (exec->lock_) (void)exec->lock_->Release();
    for (auto& s : exec->sources_) (void)s.source->Stop();
    MutexLock lock(&exec->mu_);
    exec->terminated_ = true;
    return RedactSecretValues(st, exec->secret_options_);
  }
  exec->thread_ = std::thread([e = exec.get()] { e->RunQueryThread(); });
  return exec;
}

Status MicroBatchExecution::Open(std::vector<SourceSpec> sources,
                                 std::unique_ptr<IncrementalPlan> plan, SinkFactory sink_factory) {
  const std::string& root = options_.checkpoint_root;
  if (root.empty()) return Status::InvalidArgument("streaming query: no checkpoint location");
  if (options_.engine == nullptr) return Status::InvalidArgument("streaming query: no engine");
  if (!plan) return Status::InvalidArgument("streaming query: no plan");
  if (!sink_factory) return Status::InvalidArgument("streaming query: no sink");
  if (options_.trigger.kind == TriggerKind::kContinuous) {
    return Status::NotSupported(
        "Trigger.Continuous is not supported: Sluice runs micro-batches only; use "
        "Trigger.ProcessingTime('" +
        std::to_string(options_.trigger.interval_ms) +
        " milliseconds') for low latency, or Trigger.AvailableNow to process what is there and "
        "stop");
  }
  fs_ = options_.fs ? options_.fs : fs::LocalFileSystem();
  if (options_.test_crash_at) {
    auto fi = std::make_shared<fs::FaultInjectingFileSystem>(fs_);
    fi->SetCrashPoint(*options_.test_crash_at);
    fs_ = fi;
  }
  clock_ = options_.clock ? options_.clock : DefaultClock();
  start_time_ms_ = clock_->NowMs();

  // A group-mode query's root holds no batches of its own (its tasks' are under tasks/): a run
  // of it here would read its sources again from the start and write their rows twice.
  SLUICE_ASSIGN_OR_RETURN(bool group_root, fs_->Exists(fs::JoinPath(root, kGroupRecordFileName)));
  if (group_root) {
    return Status::InvalidArgument(
        "checkpoint " + std::string(root) +
        " belongs to a query run with sluice run --group (it has a group record; its batches are "
        "under tasks/): run it with --group, or use a new checkpoint");
  }
  // Query id, then the lock before any log is read.
  SLUICE_ASSIGN_OR_RETURN(StreamMetadata meta,
                          LoadOrCreateStreamMetadata(*fs_, root, {.sync = options_.sync}));
  query_id_ = meta.id;
  run_id_ = NewUuidV4();
  SLUICE_ASSIGN_OR_RETURN(
      lock_,
      CheckpointLock::Acquire(root, CurrentProcessHolder(query_id_, run_id_, start_time_ms_)));
  // As the lock's owner: what killed runs left (state working directories, temporary files).
  SLUICE_ASSIGN_OR_RETURN(ReclaimedLeftovers reclaimed, ReclaimCheckpointLeftovers(*fs_, root));
  if (reclaimed.work_dirs + reclaimed.temp_files > 0) {
    SLUICE_LOG(kInfo) << root << ": removed " << reclaimed.work_dirs
                      << " state working directories and " << reclaimed.temp_files
                      << " temporary files left by an earlier run";
  }
  offsets_ = std::make_unique<OffsetSeqLog>(fs_, root);
  commits_ = std::make_unique<CommitLog>(fs_, root);

  if (plan->num_sources() != sources.size()) {
    return Status::InvalidArgument("the plan reads " + std::to_string(plan->num_sources()) +
                                   " sources but the query has " + std::to_string(sources.size()));
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(conn_, options_.engine->Connect(), "streaming query");

  // Sources, and the check that they are the ones the checkpoint was made with.
  std::vector<std::string> identities;
  for (size_t i = 0; i < sources.size(); ++i) {
    auto& spec = sources[i];
    if (!spec.factory)
      return Status::InvalidArgument("source " + std::to_string(i) + ": no factory");
    sources::SourceContext ctx;
    ctx.fs = fs_;
    ctx.engine = options_.engine;
    ctx.checkpoint_dir = fs::JoinPath(fs::JoinPath(root, kSourcesDirName), std::to_string(i));
    ctx.options = spec.options;
    ctx.clock = clock_.get();
    SLUICE_ASSIGN_OR_RETURN_CTX(auto src, spec.factory(ctx),
                                "creating source " + std::to_string(i));
    identities.push_back(spec.identity.empty() ? src->Description() : spec.identity);
    sources_.push_back({std::move(src), spec.read_limit, std::nullopt, std::nullopt});
  }
  SLUICE_RETURN_NOT_OK(CheckOrRecordSourceIdentities(*fs_, root, identities, options_.sync));

  RestartOptions ro;
  ro.num_sources = sources_.size();
  ro.session_conf = options_.session_conf;
  ro.explicit_keys = options_.explicit_conf_keys;
  ro.checkpoint_root = root;
  SLUICE_ASSIGN_OR_RETURN(restart_, PlanRestart(*offsets_, *commits_, ro));
  for (const auto& w : restart_.warnings)
    SLUICE_LOG(kWarning) << "checkpoint " << root << ": " << w;
  for (size_t i = 0; i < sources_.size() && i < restart_.start_offsets.size(); ++i) {
    sources_[i].start = restart_.start_offsets[i];
  }
  {
    MutexLock lock(&mu_);  // no other thread yet: for the analysis's sake
    next_batch_id_ = restart_.batch_id;
    watermark_ms_ = restart_.batch_watermark_ms;
  }
  previous_watermark_ms_ = restart_.previous_watermark_ms;
  pending_rerun_ = restart_.kind == StartKind::kRerunBatch;

  std::string policy = "min";
  if (auto it = restart_.conf.find(std::string(kConfMultipleWatermarkPolicy));
      it != restart_.conf.end()) {
    policy = it->second;
  }
  SLUICE_ASSIGN_OR_RETURN(auto tracker, WatermarkTracker::Make(plan->watermark_nodes(), policy,
                                                               restart_.batch_watermark_ms));
  watermarks_.emplace(std::move(tracker));
  watermarks_->RestoreNodeWatermarks(options_.initial_node_watermarks_ms);
  {
    MutexLock lock(&mu_);
    node_watermarks_ms_ = watermarks_->node_watermarks();
  }

  PlanContext pc{
      options_.engine, fs_, root, restart_.conf, options_.output_mode, options_.prepare_connection};
  SLUICE_RETURN_NOT_OK_CTX(plan->Open(pc), "opening " + plan->Description());
  plan_ = std::move(plan);
  SLUICE_ASSIGN_OR_RETURN_CTX(
      sink_, sink_factory(SinkContext{query_id_, run_id_, root, fs_, options_.engine}),
      "opening the sink");
  if (!sink_) return Status::InvalidArgument("the sink factory returned no sink");

  // Triggers.
  if (options_.trigger.kind == TriggerKind::kOnce) {
    single_batch_ = true;
    forced_limit_.all_available = true;
    for (const auto& s : sources_) {
      if (s.limit.max_files || s.limit.max_bytes || s.limit.max_rows) {
        SLUICE_LOG(kWarning) << s.source->Description()
                             << ": read limits (maxFilesPerTrigger, maxBytesPerTrigger, "
                                "maxOffsetsPerTrigger) are ignored with Trigger.Once; use "
                                "Trigger.AvailableNow to process all data in limited batches";
      }
    }
  } else if (options_.trigger.kind == TriggerKind::kAvailableNow) {
    available_now_ = true;
    for (auto& s : sources_) {
      Status prep = s.source->PrepareForAvailableNow();
      if (prep.IsNotSupported()) {
        SLUICE_LOG(kWarning) << s.source->Description()
                             << " does not support Trigger.AvailableNow; the query runs a single "
                                "batch of all available data instead";
        available_now_ = false;
        single_batch_ = true;
        forced_limit_.all_available = true;
        break;
      }
      SLUICE_RETURN_NOT_OK_CTX(prep, "preparing " + s.source->Description() + " for AvailableNow");
    }
  }
  Trigger effective = options_.trigger;
  if (single_batch_) effective = Trigger::Once();
  SLUICE_ASSIGN_OR_RETURN(executor_, MakeTriggerExecutor(effective, clock_));
  idle_backoff_ms_ = options_.idle_backoff_initial_ms;
  return Status::OK();
}

MicroBatchExecution::~MicroBatchExecution() { (void)Stop(); }

void MicroBatchExecution::Post(ListenerBus::Event event) {
  if (options_.listener_bus) options_.listener_bus->Post(std::move(event));
}

void MicroBatchExecution::SetStatus(std::string message, bool data_available, bool trigger_active) {
  MutexLock lock(&mu_);
  status_ = {std::move(message), data_available, trigger_active};
}

void MicroBatchExecution::RunQueryThread() {
  Post(QueryStartedEvent{query_id_, run_id_, options_.query_name,
                         FormatUtcTimestampMs(start_time_ms_)});
  Status st = executor_->Execute([this] { return RunTrigger(); });
  // A source interrupted by Stop (Source::Interrupt) ends its wait with Cancelled: a stop.
  if (st.code() == StatusCode::kCancelled && stop_.load()) st = Status::OK();
  if (!st.ok()) {
    st = RedactSecretValues(st, secret_options_);
    std::string q = options_.query_name ? *options_.query_name : "<unnamed>";
    st = st.WithContext("query " + q + " [id = " + query_id_ + ", runId = " + run_id_ +
                        "] terminated with exception");
    // The owner is given the error (AwaitTermination, Exception(), onQueryTerminated) and
    // reports it (sluice sql, sluice run, the API's caller): logged at INFO, not ERROR, so that a
    // user sees it once.
    SLUICE_LOG(kInfo) << st.ToString();
  }
  for (auto& s : sources_) {
    Status stop = s.source->Stop();
    if (!stop.ok()) {
      SLUICE_LOG(kWarning) << "stopping " << s.source->Description() << ": " << stop.ToString();
    }
  }
  if (lock_) (void)lock_->Release();
  Post(QueryTerminatedEvent{query_id_, run_id_,
                            st.ok() ? std::nullopt : std::optional<std::string>(st.ToString())});
  {
    MutexLock lock(&mu_);
    if (!st.ok()) exception_ = st;
    terminated_ = true;
    status_ = {"Stopped", false, false};
  }
  cv_.SignalAll();
}

void MicroBatchExecution::IdleSleep() {
  if (options_.trigger.kind == TriggerKind::kProcessingTime && options_.trigger.interval_ms > 0) {
    return;  // the executor waits for the next slot
  }
  clock_->WaitTillTime(clock_->NowMs() + idle_backoff_ms_, &stop_);
  idle_backoff_ms_ =
      std::min(idle_backoff_ms_ * 2, std::max<int64_t>(options_.idle_backoff_max_ms, 1));
}

Result<bool> MicroBatchExecution::RunTrigger() {
  if (stop_.load()) return false;
  const int64_t trigger_start = clock_->NowMs();
  const int64_t mono_start = MonotonicMs();
  int64_t seq;
  {
    MutexLock lock(&mu_);
    seq = ++trigger_seq_;
  }
  BatchTimings t;
  BatchId id = NextBatchId();
  const std::string batch_ctx = "batch " + id.ToString();

  if (pending_rerun_) {
    // Re-run batch N exactly as recorded; offsets/<N> is not written again.
    pending_rerun_ = false;
    SetStatus("Processing new data", true, true);
    for (size_t i = 0; i < sources_.size(); ++i) sources_[i].latest = restart_.end_offsets[i];
    SLUICE_RETURN_NOT_OK(RunBatch(id, restart_.end_offsets, restart_.batch_watermark_ms,
                                  restart_.batch_timestamp_ms.value_or(trigger_start), false,
                                  trigger_start, &t));
    return !single_batch_;
  }

  SetStatus("Getting offsets from sources", false, true);
  std::vector<std::optional<std::string>> ends(sources_.size());
  bool has_new_data = false;
  int64_t m0 = MonotonicMs();
  for (size_t i = 0; i < sources_.size(); ++i) {
    auto& s = sources_[i];
    sources::ReadLimit limit = forced_limit_.all_available ? forced_limit_ : s.limit;
    SLUICE_ASSIGN_OR_RETURN_CTX(ends[i], s.source->LatestOffset(s.start, limit),
                                batch_ctx + ", source " + std::to_string(i) + " (" +
                                    s.source->Description() + "): latestOffset");
    s.latest = ends[i];
    if (!ends[i].has_value()) {
      ends[i] = s.start;  // nothing at all: stay where we are
    } else if (ends[i] != s.start) {
      has_new_data = true;
    }
  }
  t.Add(kDurationLatestOffset, MonotonicMs() - m0);
  if (!has_new_data && options_.shared_watermark && watermarks_->has_nodes()) {
    // The others may have moved the shared watermark while this query had no data.
    SLUICE_ASSIGN_OR_RETURN_CTX(int64_t shared,
                                options_.shared_watermark->Combine(watermarks_->global_ms()),
                                batch_ctx + ": the shared watermark");
    if (shared > CurrentWatermarkMs()) {
      {
        MutexLock lock(&mu_);
        watermark_ms_ = shared;
      }
      last_batch_wants_no_data_ =
          last_batch_wants_no_data_ || plan_->WantsNoDataBatch(previous_watermark_ms_, shared);
    }
  }
  int64_t wm = CurrentWatermarkMs();
  bool no_data_batch =
      !has_new_data && options_.no_data_batches && last_batch_wants_no_data_ && !single_batch_;
  if (!has_new_data && !no_data_batch) {
    {
      MutexLock lock(&mu_);
      last_idle_trigger_seq_ = seq;
      status_ = {"Waiting for data to arrive", false, false};
    }
    cv_.SignalAll();
    ReportIdle(trigger_start);
    if (available_now_ || single_batch_) return false;  // nothing left: terminate
    IdleSleep();
    return true;
  }
  idle_backoff_ms_ = options_.idle_backoff_initial_ms;
  SetStatus("Processing new data", true, true);

  // offsets/<N>: durable before any data is read.
  OffsetSeq seq_entry;
  seq_entry.version = restart_.offset_log_version;
  seq_entry.metadata = OffsetSeqMetadata{wm, trigger_start, restart_.conf};
  seq_entry.offsets = ends;
  m0 = MonotonicMs();
  SLUICE_RETURN_NOT_OK_CTX(offsets_->Add(id, seq_entry, {.sync = options_.sync}),
                           batch_ctx + ": writing the offset log");
  t.Add(kDurationWalCommit, MonotonicMs() - m0);
  SLUICE_RETURN_NOT_OK(fs::CrashPoint(*fs_, kCrashAfterOffsetsWrite, batch_ctx));
  (void)mono_start;
  SLUICE_RETURN_NOT_OK(RunBatch(id, ends, wm, trigger_start, no_data_batch, trigger_start, &t));
  return !single_batch_;
}

Result<std::map<std::string, nlohmann::ordered_json>> MicroBatchExecution::Observe(
    const engine::Batch& rows) {
  std::map<std::string, nlohmann::ordered_json> out;
  if (options_.observations.empty()) return out;
  if (rows.num_columns() == 0) return out;
  for (const auto& obs : options_.observations) {
    SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch b,
                                plan::EvaluateObservation(conn_.get(), rows, obs.exprs),
                                "observe '" + obs.name + "'");
    nlohmann::ordered_json row = nlohmann::ordered_json::object();
    for (size_t c = 0; c < b.num_columns(); ++c) row[b.schema()[c].name] = CellJson(b, c);
    out[obs.name] = std::move(row);
  }
  return out;
}

Status MicroBatchExecution::RunBatch(BatchId id,
                                     const std::vector<std::optional<std::string>>& ends,
                                     int64_t watermark_ms, int64_t timestamp_ms, bool no_data_batch,
                                     int64_t trigger_start_ms, BatchTimings* t) {
  const std::string ctx = "batch " + id.ToString();
  const int64_t batch_mono_start = MonotonicMs();
  // Read each source's rows.
  PlanInput input;
  input.batch_id = id;
  input.batch_watermark_ms = watermark_ms;
  input.previous_watermark_ms = previous_watermark_ms_;
  input.batch_timestamp_ms = timestamp_ms;
  input.no_data_batch = no_data_batch;
  std::vector<int64_t> rows_in(sources_.size(), 0);
  int64_t m0 = MonotonicMs();
  for (size_t i = 0; i < sources_.size(); ++i) {
    auto& s = sources_[i];
    const std::string sctx =
        ctx + ", source " + std::to_string(i) + " (" + s.source->Description() + ")";
    engine::Batch b;
    if (ends[i].has_value() && ends[i] != s.start) {
      SLUICE_ASSIGN_OR_RETURN_CTX(b, s.source->GetBatch(s.start, *ends[i]), sctx + ": getBatch");
    }
    if (b.num_columns() == 0) {
      SLUICE_ASSIGN_OR_RETURN_CTX(b, engine::EmptyBatch(s.source->schema()),
                                  sctx + ": empty batch");
    }
    rows_in[i] = b.num_rows();
    input.sources.push_back(std::move(b));
  }
  t->Add(kDurationGetBatch, MonotonicMs() - m0);

  m0 = MonotonicMs();
  SLUICE_ASSIGN_OR_RETURN_CTX(PlanOutput out, plan_->Execute(input), ctx);
  t->Add(kDurationQueryPlanning, MonotonicMs() - m0);
  SLUICE_RETURN_NOT_OK(fs::CrashPoint(*fs_, kCrashAfterStateCommit, ctx));

  // Watermark for the next batch; commits/<N> is written and synced under a temporary name on
  // another thread while the sink runs (PendingCommitEntry), and published only after the sink
  // has returned: the order in which entries become visible and durable is unchanged.
  const int64_t own_next_wm = watermarks_->Update(out.event_time);
  int64_t next_wm = own_next_wm;
  if (options_.shared_watermark && watermarks_->has_nodes()) {
    SLUICE_ASSIGN_OR_RETURN_CTX(int64_t shared, options_.shared_watermark->Combine(own_next_wm),
                                ctx + ": the shared watermark");
    next_wm = std::max(watermark_ms, shared);
  }
  PendingCommitEntry commit_entry(*commits_, id, CommitMetadata{next_wm, std::nullopt},
                                  {.sync = options_.sync});

  m0 = MonotonicMs();
  SLUICE_ASSIGN_OR_RETURN_CTX(auto observed, Observe(out.rows), ctx);
  SLUICE_RETURN_NOT_OK_CTX(sink_->AddBatch(id, out.rows, options_.output_mode),
                           ctx + ", sink " + sink_->Description());
  t->Add(kDurationAddBatch, MonotonicMs() - m0);
  SLUICE_RETURN_NOT_OK(fs::CrashPoint(*fs_, kCrashAfterSinkWrite, ctx));

  m0 = MonotonicMs();
  SLUICE_RETURN_NOT_OK_CTX(commit_entry.Publish(), ctx + ": writing the commit log");
  SLUICE_RETURN_NOT_OK(fs::CrashPoint(*fs_, kCrashAfterCommitWrite, ctx));
  if (options_.shared_watermark && watermarks_->has_nodes()) {
    SLUICE_RETURN_NOT_OK_CTX(options_.shared_watermark->Publish(id, own_next_wm),
                             ctx + ": publishing the watermark");
  }
  std::vector<std::optional<std::string>> starts;
  for (size_t i = 0; i < sources_.size(); ++i) {
    auto& s = sources_[i];
    starts.push_back(s.start);
    if (ends[i].has_value()) {
      SLUICE_RETURN_NOT_OK_CTX(
          s.source->Commit(*ends[i]),
          ctx + ", source " + std::to_string(i) + " (" + s.source->Description() + "): commit");
    }
    s.start = ends[i];
  }
  t->Add(kDurationCommitOffsets, MonotonicMs() - m0);
  SLUICE_ASSIGN_OR_RETURN_CTX(
      PurgeResult purged,
      PurgeOldLogEntries(*offsets_, *commits_, id, options_.min_batches_to_retain, &purged_below_),
      ctx + ": purging old log entries");
  (void)purged;
  last_batch_wants_no_data_ = plan_->WantsNoDataBatch(watermark_ms, next_wm);
  previous_watermark_ms_ = watermark_ms;
  {
    MutexLock lock(&mu_);
    next_batch_id_ = id.Next();
    watermark_ms_ = next_wm;
    node_watermarks_ms_ = watermarks_->node_watermarks();
  }

  // Progress.
  const int64_t trigger_ms = MonotonicMs() - batch_mono_start +
                             t->ms[std::string(kDurationLatestOffset)] +
                             t->ms[std::string(kDurationWalCommit)];
  t->ms[std::string(kDurationTriggerExecution)] = trigger_ms;
  StreamingQueryProgress p;
  p.id = query_id_;
  p.run_id = run_id_;
  p.name = options_.query_name;
  p.timestamp = FormatUtcTimestampMs(trigger_start_ms);
  p.batch_id = id.value();
  p.batch_duration = trigger_ms;
  p.duration_ms = t->ms;
  const double interval_s =
      last_trigger_start_ms_ >= 0 ? (trigger_start_ms - last_trigger_start_ms_) / 1000.0 : 0;
  const double processed_s = std::max<int64_t>(trigger_ms, 1) / 1000.0;
  for (size_t i = 0; i < sources_.size(); ++i) {
    SourceProgress sp;
    sp.description = sources_[i].source->Description();
    sp.start_offset = starts[i];
    sp.end_offset = ends[i];
    sp.latest_offset = sources_[i].latest;
    sp.num_input_rows = rows_in[i];
    sp.input_rows_per_second = interval_s > 0 ? rows_in[i] / interval_s : 0;
    sp.processed_rows_per_second = rows_in[i] / processed_s;
    sp.metrics = sources_[i].source->Metrics(sources_[i].latest);
    p.sources.push_back(std::move(sp));
  }
  p.sink.description = sink_->Description();
  p.sink.num_output_rows = sink_->LastNumOutputRows().value_or(-1);
  p.sink.metrics = sink_->Metrics();
  p.state_operators = out.state_operators;
  p.observed_metrics = std::move(observed);
  if (watermarks_->has_nodes()) {
    p.event_time["watermark"] = FormatUtcTimestampMs(watermark_ms);
    if (!out.event_time.empty() && out.event_time[0].count > 0) {
      p.event_time["min"] = FormatUtcTimestampMs(out.event_time[0].min_ms);
      p.event_time["max"] = FormatUtcTimestampMs(out.event_time[0].max_ms);
      p.event_time["avg"] = FormatUtcTimestampMs(static_cast<int64_t>(out.event_time[0].avg_ms));
    }
  }
  last_trigger_start_ms_ = trigger_start_ms;
  last_idle_progress_ms_ = trigger_start_ms;  // idle progress: 10 s after the last progress
  if (options_.on_batch_progress) options_.on_batch_progress(p);
  AddProgress(std::move(p));
  return Status::OK();
}

void MicroBatchExecution::ReportIdle(int64_t trigger_start_ms) {
  if (last_idle_progress_ms_ >= 0 &&
      trigger_start_ms - last_idle_progress_ms_ < options_.no_data_progress_interval_ms) {
    return;
  }
  last_idle_progress_ms_ = trigger_start_ms;
  StreamingQueryProgress p;
  p.id = query_id_;
  p.run_id = run_id_;
  p.name = options_.query_name;
  p.timestamp = FormatUtcTimestampMs(trigger_start_ms);
  p.batch_id = NextBatchId().value();
  for (const auto& s : sources_) {
    SourceProgress sp;
    sp.description = s.source->Description();
    sp.start_offset = s.start;
    sp.end_offset = s.start;
    sp.latest_offset = s.latest;
    sp.metrics = s.source->Metrics(s.latest);
    p.sources.push_back(std::move(sp));
  }
  p.sink.description = sink_->Description();
  p.sink.num_output_rows = 0;
  if (watermarks_->has_nodes())
    p.event_time["watermark"] = FormatUtcTimestampMs(CurrentWatermarkMs());
  // Listeners get onQueryIdle instead of onQueryProgress for an idle trigger (Spark 3.5+); the
  // progress still goes to RecentProgress/LastProgress.
  Post(QueryIdleEvent{query_id_, run_id_, p.timestamp});
  AddProgress(std::move(p), /*post_event=*/false);
}

void MicroBatchExecution::AddProgress(StreamingQueryProgress p, bool post_event) {
  if (post_event) Post(QueryProgressEvent{p});
  {
    MutexLock lock(&mu_);
    recent_.push_back(std::move(p));
    while (recent_.size() > kMaxRecentProgress) recent_.pop_front();
  }
  cv_.SignalAll();
}

bool MicroBatchExecution::IsActive() const {
  MutexLock lock(&mu_);
  return !terminated_;
}

StreamingQueryStatus MicroBatchExecution::CurrentStatus() const {
  MutexLock lock(&mu_);
  return status_;
}

Status MicroBatchExecution::Stop() {
  stop_.store(true);
  if (executor_) executor_->RequestStop();
  // A source waiting for an external system (a Kafka broker that is down) returns at once.
  for (auto& s : sources_) s.source->Interrupt();
  if (thread_.joinable()) thread_.join();
  return Status::OK();
}

Status MicroBatchExecution::AwaitTermination() {
  MutexLock lock(&mu_);
  while (!terminated_) cv_.Wait(&mu_);
  return exception_.value_or(Status::OK());
}

Result<bool> MicroBatchExecution::AwaitTermination(int64_t timeout_ms) {
  MutexLock lock(&mu_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!terminated_) {
    if (!cv_.WaitUntil(&mu_, deadline) && !terminated_) return false;
  }
  if (exception_) return *exception_;
  return true;
}

Status MicroBatchExecution::ProcessAllAvailable() {
  MutexLock lock(&mu_);
  const int64_t target = trigger_seq_ + 1;
  while (!terminated_ && last_idle_trigger_seq_ < target) cv_.Wait(&mu_);
  return exception_.value_or(Status::OK());
}

std::optional<Status> MicroBatchExecution::Exception() const {
  MutexLock lock(&mu_);
  return exception_;
}

std::optional<StreamingQueryProgress> MicroBatchExecution::LastProgress() const {
  MutexLock lock(&mu_);
  if (recent_.empty()) return std::nullopt;
  return recent_.back();
}

std::vector<StreamingQueryProgress> MicroBatchExecution::RecentProgress() const {
  MutexLock lock(&mu_);
  return {recent_.begin(), recent_.end()};
}

BatchId MicroBatchExecution::NextBatchId() const {
  MutexLock lock(&mu_);
  return next_batch_id_;
}

int64_t MicroBatchExecution::CurrentWatermarkMs() const {
  MutexLock lock(&mu_);
  return watermark_ms_;
}

std::vector<std::optional<int64_t>> MicroBatchExecution::NodeWatermarksMs() const {
  MutexLock lock(&mu_);
  return node_watermarks_ms_;
}

}  // namespace sluice::stream
