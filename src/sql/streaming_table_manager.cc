#include "sql/streaming_table_manager.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/logging.h"
#include "common/strings.h"
#include "delta/log_segment.h"
#include "delta/table.h"
#include "plan/planner.h"
#include "plan/stream_query_parser.h"
#include "sinks/delta_sink.h"
#include "sources/source_factory.h"
#include "sql/auto_cdc_flow.h"
#include "sql/delta_references.h"
#include "sql/kafka_sink_flow.h"
#include "sql/literal_rows.h"
#include "sql/pipeline_expectation_sink.h"
#include "sql/streaming_progress_store.h"
#include "sql/streaming_source_resolver.h"
#include "sql/streaming_table_manager_internal.h"
#include "stream/persisted_conf.h"

namespace sluice::sql {
namespace {

constexpr char kChangeDataFeed[] = "delta.enableChangeDataFeed";

std::string TriggerText(const std::optional<stream::Trigger>& t) {
  return t ? t->ToString() : std::string("Default");
}

}  // namespace

stream::ConfMap SessionConf(const Settings& settings) {
  stream::ConfMap conf = stream::DefaultPersistedConf();
  conf[std::string(stream::kConfShufflePartitions)] = settings.GetString("shufflePartitions");
  conf[std::string(stream::kConfMultipleWatermarkPolicy)] =
      settings.GetString("multipleWatermarkPolicy");
  return conf;
}

StreamingDefinition TableDefinition(const CreateStreamingTableStatement& s) {
  StreamingDefinition def;
  def.kind = StreamingDefinition::Kind::kTable;
  def.name = NormalizeTableName(s.name);
  def.target = def.name;
  def.query = s.query;
  def.output_mode = s.output_mode;
  def.trigger = s.trigger;
  def.schedule_every_ms = s.schedule_every_ms;
  def.columns = s.columns;
  def.partitioned_by = s.partitioned_by;
  def.properties = s.properties;
  def.expectations = s.expectations;
  return def;
}

StreamingDefinition FlowDefinition(const CreateFlowStatement& s) {
  StreamingDefinition def;
  def.kind = StreamingDefinition::Kind::kFlow;
  def.name = NormalizeTableName(s.name);
  def.target = NormalizeTableName(s.target);
  def.query = s.query;
  def.auto_cdc = s.auto_cdc;
  return def;
}

Status CheckTrigger(const StreamingDefinition& def) {
  if (def.trigger && def.trigger->kind == stream::TriggerKind::kContinuous) {
    return Status::NotSupported(
        "TRIGGER CONTINUOUS is not supported: Sluice runs micro-batches only; use "
        "TRIGGER PROCESSING TIME '<interval>' for low latency (or the default trigger, "
        "which starts the next batch as soon as data arrives), or TRIGGER AVAILABLE NOW to "
        "process what is there and stop");
  }
  return Status::OK();
}

std::function<Status(engine::Connection&)> StaticRelations(
    const PreparedQuery& prepared, std::shared_ptr<fs::FileSystem> fs, engine::Engine* engine,
    std::map<std::string, engine::Batch> empty) {
  auto refs = prepared.static_tables;
  auto paths = prepared.static_paths;
  return [refs, paths, fs, engine, empty](engine::Connection& conn) -> Status {
    for (size_t i = 0; i < refs.size(); ++i) {
      if (auto e = empty.find(refs[i].view_name); e != empty.end()) {
        SLUICE_RETURN_NOT_OK(conn.RegisterBatch(refs[i].view_name, e->second));
        continue;
      }
      SLUICE_ASSIGN_OR_RETURN(auto table, delta::DeltaTable::Open(fs, engine, paths[i]));
      std::shared_ptr<const delta::Snapshot> snapshot;
      if (refs[i].kind == DeltaReference::Kind::kVersion) {
        SLUICE_ASSIGN_OR_RETURN(snapshot, table->SnapshotAt(Version(*refs[i].version)));
      } else {
        SLUICE_ASSIGN_OR_RETURN(snapshot, table->Latest());
      }
      SLUICE_ASSIGN_OR_RETURN(std::string scan, table->ScanSql(*snapshot));
      SLUICE_RETURN_NOT_OK(conn.Execute("CREATE OR REPLACE TEMP VIEW " +
                                        QuoteIdentifier(refs[i].view_name) + " AS " + scan));
    }
    return Status::OK();
  };
}

StreamingTableManager::StreamingTableManager(StreamingTableManagerOptions options)
    : options_(std::move(options)),
      catalog_(options_.fs, options_.tables->warehouse()),
      sinks_(options_.fs, options_.tables->warehouse()) {}

std::string StreamingTableManager::Key(const StreamingDefinition& def) const {
  return (def.kind == StreamingDefinition::Kind::kFlow ? "flow:" : "table:") + def.name;
}

std::map<std::string, std::string> StreamingTableManager::TableProperties(
    const StreamingDefinition& def) {
  std::map<std::string, std::string> props = def.properties;
  if (props.find(kChangeDataFeed) == props.end()) props[kChangeDataFeed] = "true";
  return props;
}

Result<engine::Batch> StreamingTableManager::Execute(const StreamingStatement& statement,
                                                     engine::Connection* conn) {
  if (const auto* s = std::get_if<CreateStreamingTableStatement>(&statement)) return Create(*s);
  if (const auto* s = std::get_if<RefreshStreamingTableStatement>(&statement)) return Refresh(*s);
  if (const auto* s = std::get_if<CreateFlowStatement>(&statement)) return CreateFlow(*s);
  return Show(conn);
}

Status StreamingTableManager::Analyze(StreamingDefinition* def,
                                      const std::function<bool(const std::string&)>& also) {
  if (!def->query) return Status::OK();
  const std::string what =
      (def->kind == StreamingDefinition::Kind::kFlow ? "flow " : "table ") + def->name;
  SLUICE_ASSIGN_OR_RETURN_CTX(plan::ParsedStreamingQuery parsed,
                              plan::ParseStreamingQuery(*def->query), what);
  def->sources.clear();
  for (const plan::StreamRelation& r : parsed.streams) {
    SLUICE_ASSIGN_OR_RETURN_CTX(
        ResolvedSource src,
        ResolveStreamRelation(r, *options_.tables,
                              [this, &also](const std::string& name) {
                                if (also && also(NormalizeTableName(name))) return true;
                                auto def = catalog_.Find(StreamingDefinition::Kind::kTable, name);
                                return def.ok() && def->has_value();
                              }),
        what);
    def->sources.push_back(std::move(src));
  }
  return Status::OK();
}

Result<PreparedQuery> Prepare(const StreamingDefinition& def, engine::Engine* engine,
                              const TableCatalog& tables,
                              const std::function<bool(const std::string&)>& also_table) {
  PreparedQuery out;
  SLUICE_ASSIGN_OR_RETURN(plan::ParsedStreamingQuery parsed,
                          plan::ParseStreamingQuery(def.query.value_or("")));
  SLUICE_ASSIGN_OR_RETURN(RewrittenQuery rewritten,
                          RewriteDeltaReferences(parsed.sql, [&](const std::string& name) {
                            if (also_table && also_table(NormalizeTableName(name))) return true;
                            Result<bool> exists = tables.Exists(TableName{name, false});
                            return exists.ok() && *exists;
                          }));
  std::set<std::string> stream_aliases;  // an alias of a STREAM relation is no static table
  for (const plan::StreamRelation& r : parsed.streams) {
    stream_aliases.insert(NormalizeTableName(r.alias));
  }
  for (const DeltaReference& ref : rewritten.references) {
    if (ref.kind == DeltaReference::Kind::kLatest && !ref.table.is_path &&
        stream_aliases.count(NormalizeTableName(ref.table.name)) > 0) {
      continue;
    }
    if (ref.kind != DeltaReference::Kind::kLatest && ref.kind != DeltaReference::Kind::kVersion) {
      return Status::NotSupported(
          "a streaming query can read static Delta tables by name or path (optionally VERSION AS "
          "OF), not through table_changes, TIMESTAMP AS OF or DESCRIBE; use FROM STREAM for "
          "changes");
    }
    SLUICE_ASSIGN_OR_RETURN(std::string path, tables.Resolve(ref.table));
    out.static_tables.push_back(ref);
    out.static_paths.push_back(path);
  }
  parsed.sql = rewritten.sql;
  plan::StreamingQuerySpec spec{std::move(parsed), def.output_mode};
  SLUICE_ASSIGN_OR_RETURN(out.planned, plan::PlanStreamingQuery(engine, spec));
  return out;
}

Result<engine::Batch> StreamingTableManager::Create(const CreateStreamingTableStatement& s) {
  StreamingDefinition def = TableDefinition(s);
  const std::string ctx = "CREATE STREAMING TABLE " + def.name;
  SLUICE_RETURN_NOT_OK_CTX(CheckTrigger(def), ctx);
  SLUICE_RETURN_NOT_OK_CTX(options_.tables->Resolve(TableName{def.name, false}).status(), ctx);
  SLUICE_ASSIGN_OR_RETURN(std::optional<StreamingDefinition> existing,
                          catalog_.Find(StreamingDefinition::Kind::kTable, def.name));
  if (existing && !s.or_refresh) {
    return Status::AlreadyExists(ctx + ": streaming table " + def.name +
                                 " already exists (CREATE OR REFRESH replaces its definition)");
  }
  // A table is there when its log has a commit: a _delta_log without one (a run killed in the
  // table's first commit) is no table yet, as Delta reads it.
  SLUICE_ASSIGN_OR_RETURN(std::string path, options_.tables->Resolve(TableName{def.name, false}));
  Result<delta::LogListing> log = delta::ListLog(options_.fs.get(), path);
  if (!log.ok() && !log.status().IsNotFound()) return log.status().WithContext(ctx);
  const bool table_exists = log.ok();
  if (!existing && table_exists) {
    return Status::AlreadyExists(ctx + ": table " + def.name +
                                 " already exists and is not a streaming table");
  }
  SLUICE_ASSIGN_OR_RETURN(std::optional<SinkDefinition> sink, sinks_.Find(def.name));
  if (sink) return Status::AlreadyExists(ctx + ": " + def.name + " is a sink (DROP SINK it first)");
  SLUICE_RETURN_NOT_OK_CTX(Analyze(&def), ctx);
  // Nothing changed, unless the table of declared columns is still to be made (the CREATE that
  // recorded the definition was killed before its table's commit).
  const bool create_table = !table_exists && !def.columns.empty();
  if (existing && existing->SameAs(def) && !create_table) return engine::Batch();
  if (def.query || !def.expectations.empty()) {
    // Plan once now so that what the model does not support is refused at CREATE, and bind the
    // query (or, for a table that flows fill, its expectations) against its inputs' schemas so
    // that an unknown column or function is too.
    SLUICE_RETURN_NOT_OK_CTX(CheckDefinition(s, {}).status(), ctx);
  }
  // The definition is recorded before its table is made, so that a table the catalog does not
  // know is never one this CREATE made: a kill between the two leaves a definition without its
  // table, which the next CREATE completes (finding 13 of docs/reliability.md), where the other
  // order left a table refused as "not a streaming table" forever.
  SLUICE_RETURN_NOT_OK_CTX(catalog_.Save(def), ctx);
  if (create_table) {
    CreateTableStatement create;
    create.table = TableName{def.name, false};
    create.columns = def.columns;
    create.partitioned_by = def.partitioned_by;
    create.properties = TableProperties(def);
    Status made = options_.run_table_statement(create).status();
    if (!made.ok()) {
      // Not made (a bad column type, ...): what the catalog held before is put back.
      Status undo = existing ? catalog_.Save(*existing)
                             : catalog_.Remove(StreamingDefinition::Kind::kTable, def.name);
      if (!undo.ok()) {
        made = Status(made.code(), made.message() + " (and its definition stays recorded: " +
                                       undo.ToString() + ")");
      }
      return made.WithContext(ctx);
    }
  }
  return engine::Batch();
}

Result<engine::Batch> StreamingTableManager::CreateFlow(const CreateFlowStatement& s) {
  StreamingDefinition def = FlowDefinition(s);
  const std::string ctx = "CREATE FLOW " + def.name;
  SLUICE_RETURN_NOT_OK_CTX(options_.tables->Resolve(TableName{def.name, false}).status(), ctx);
  SLUICE_ASSIGN_OR_RETURN(std::optional<StreamingDefinition> existing,
                          catalog_.Find(StreamingDefinition::Kind::kFlow, def.name));
  if (existing) {
    // Re-declaring the same flow (a pipeline file run again by `sluice run`) changes nothing;
    // a different definition under the same name is an error.
    if (existing->target == def.target && existing->query == def.query &&
        existing->auto_cdc == def.auto_cdc) {
      return engine::Batch();
    }
    return Status::AlreadyExists(
        ctx + ": flow " + def.name +
        " already exists with a different definition (use a new flow name)");
  }
  // A flow into a sink (CREATE SINK) writes through it; the table checks below do not apply.
  SLUICE_ASSIGN_OR_RETURN(std::optional<SinkDefinition> sink, sinks_.Find(def.target));
  if (sink && def.auto_cdc) {
    return Status::InvalidArgument(ctx + ": " + def.target +
                                   " is a sink: an AUTO CDC flow writes a table; a sink takes "
                                   "append flows (CREATE FLOW f AS INSERT INTO sink SELECT ...)");
  }
  if (sink) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<StreamingDefinition> others, FlowsInto(def.target));
    SLUICE_RETURN_NOT_OK_CTX(CheckFlowIntoSink(*sink, def.name, others), ctx);
  }
  SLUICE_ASSIGN_OR_RETURN(std::optional<StreamingDefinition> target,
                          catalog_.Find(StreamingDefinition::Kind::kTable, def.target));
  SLUICE_ASSIGN_OR_RETURN(bool table_exists, options_.tables->Exists(TableName{def.target, false}));
  if (!sink && !target && !table_exists) {
    return Status::NotFound(ctx + ": the target table " + def.target +
                            " does not exist (create it, a streaming table or a sink, first)");
  }
  if (!def.auto_cdc && target && target->output_mode != sinks::OutputMode::kAppend) {
    return Status::InvalidArgument(ctx + ": an append flow cannot write to " + def.target +
                                   ", whose output mode is " +
                                   sinks::OutputModeName(target->output_mode));
  }
  SLUICE_RETURN_NOT_OK_CTX(Analyze(&def), ctx);
  SLUICE_RETURN_NOT_OK_CTX(CheckDefinition(s, {}).status(), ctx);
  if (def.auto_cdc) {
    SLUICE_ASSIGN_OR_RETURN_CTX(std::string target_path,
                                options_.tables->Resolve(TableName{def.target, false}), ctx);
    SLUICE_RETURN_NOT_OK_CTX(
        CheckAutoCdcFlow(def, target, target_path, table_exists, options_.fs, options_.engine),
        ctx);
  }
  SLUICE_RETURN_NOT_OK_CTX(catalog_.Save(def), ctx);
  return engine::Batch();
}

Result<StreamingTableManager::ExpectationsOf> StreamingTableManager::ExpectationsFor(
    const StreamingDefinition& def) const {
  if (def.kind == StreamingDefinition::Kind::kTable)
    return ExpectationsOf{def.name, def.expectations};
  if (def.auto_cdc) return ExpectationsOf{def.target, {}};
  SLUICE_ASSIGN_OR_RETURN(std::optional<StreamingDefinition> target,
                          catalog_.Find(StreamingDefinition::Kind::kTable, def.target));
  if (!target) return ExpectationsOf{def.target, {}};
  return ExpectationsOf{def.target, target->expectations};
}

Result<std::unique_ptr<stream::MicroBatchExecution>> StreamingTableManager::StartExecution(
    const StreamingDefinition& def, const stream::Trigger& trigger,
    std::optional<std::string> crash_at, const StartOptions& start) {
  SLUICE_ASSIGN_OR_RETURN(PreparedQuery prepared, Prepare(def, options_.engine, *options_.tables));
  std::vector<stream::SourceSpec> sources;
  for (const ResolvedSource& rs : def.sources) {
    stream::SourceSpec spec;
    const std::string format = rs.format;
    spec.factory = [format](const sources::SourceContext& ctx) {
      return sources::CreateSource(format, ctx);
    };
    spec.options = rs.options;
    sources.push_back(std::move(spec));
  }
  SLUICE_ASSIGN_OR_RETURN(std::string table_path,
                          options_.tables->Resolve(TableName{def.target, false}));
  sinks::DeltaSinkOptions sink_options;
  sink_options.path = table_path;
  sink_options.partition_by = def.partitioned_by;
  sink_options.configuration = TableProperties(def);
  sink_options.update_keys = prepared.planned.update_keys;
  sink_options.update_single_row = prepared.planned.update_single_row;
  // A streaming table without declared columns follows its query's schema: columns its sources
  // gain (an additive schema change, picked up on restart) are added to it, as Lakeflow's
  // streaming tables do. Declared columns and flows into other tables keep their schema.
  sink_options.merge_schema = def.kind == StreamingDefinition::Kind::kTable && def.columns.empty();
  stream::SinkFactory sink_factory =
      [sink_options](const stream::SinkContext& ctx) -> Result<std::shared_ptr<sinks::Sink>> {
    sinks::DeltaSinkOptions o = sink_options;
    o.query_id = ctx.query_id;
    SLUICE_ASSIGN_OR_RETURN(auto sink, sinks::DeltaSink::Open(ctx.fs, ctx.engine, o));
    return std::shared_ptr<sinks::Sink>(std::move(sink));
  };
  if (def.auto_cdc) {
    sink_factory = AutoCdcSinkFactory(def, table_path, catalog_.CheckpointOf(def));
  }
  if (def.kind == StreamingDefinition::Kind::kFlow) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<SinkDefinition> sink, sinks_.Find(def.target));
    if (sink) sink_factory = KafkaSinkFlowFactory(*sink, def.name);
  }
  if (start.sink_factory) sink_factory = start.sink_factory;
  // Expectations (pipeline_expectation_sink.h): checked on the rows before the sink; their
  // counts go into the batch's progress. An append flow's rows are checked against its target
  // table's expectations, as the table's own query's are.
  SLUICE_ASSIGN_OR_RETURN(ExpectationsOf checked, ExpectationsFor(def));
  std::shared_ptr<ExpectationMetrics> expectation_metrics;
  if (!checked.expectations.empty()) {
    expectation_metrics = std::make_shared<ExpectationMetrics>();
    sink_factory = ExpectationSinkFactory(std::move(sink_factory), checked.dataset,
                                          checked.expectations, expectation_metrics);
  }

  stream::ExecutionOptions o;
  o.checkpoint_root = catalog_.CheckpointOf(def);
  o.query_name = def.name;
  o.trigger = trigger;
  o.output_mode = def.output_mode;
  o.engine = options_.engine;
  o.fs = options_.fs;
  o.session_conf = SessionConf(*options_.settings);
  o.no_data_batches = options_.settings->GetBoolean("noDataBatches");
  o.test_crash_at = std::move(crash_at);
  if (auto it = node_watermarks_.find(Key(def)); it != node_watermarks_.end()) {
    o.initial_node_watermarks_ms = it->second;
  }
  const std::string checkpoint = o.checkpoint_root;
  std::shared_ptr<fs::FileSystem> progress_fs = options_.fs;
  auto on_progress = start.on_progress;
  const std::string name = def.name;
  o.on_batch_progress = [progress_fs, checkpoint, on_progress, name,
                         expectation_metrics](const stream::StreamingQueryProgress& batch) {
    stream::StreamingQueryProgress p = batch;
    if (expectation_metrics) {
      if (auto dq = expectation_metrics->Take(p.batch_id)) {
        p.observed_metrics[kDataQualityMetric] = std::move(*dq);
      }
    }
    Status st = WriteBatchProgress(*progress_fs, checkpoint, p);
    if (!st.ok()) {
      SLUICE_LOG(kWarning) << "streaming table " << name << ": " << st.ToString();
    }
    if (on_progress) on_progress(name, p);
  };
  if (!prepared.static_tables.empty()) {
    o.prepare_connection = StaticRelations(prepared, options_.fs, options_.engine, {});
  }
  return stream::MicroBatchExecution::Start(std::move(o), std::move(sources),
                                            std::move(prepared.planned.plan), sink_factory);
}

Result<std::unique_ptr<stream::MicroBatchExecution>> StreamingTableManager::Start(
    const StreamingDefinition& def, const stream::Trigger& trigger, const StartOptions& start) {
  return StartExecution(def, trigger, std::nullopt, start);
}

Status StreamingTableManager::RunToEnd(const StreamingDefinition& def,
                                       const stream::Trigger& trigger) {
  std::optional<std::string> crash_at;
  if (std::string point = options_.settings->GetString("test.crashAt"); !point.empty()) {
    crash_at = point;
    SLUICE_RETURN_NOT_OK(options_.settings->Reset("test.crashAt"));  // one shot
  }
  Result<std::unique_ptr<stream::MicroBatchExecution>> exec =
      StartExecution(def, trigger, crash_at, {});
  if (!exec.ok()) {
    last_status_[Key(def)] = "failed: " + exec.status().ToString();
    return exec.status();
  }
  {
    MutexLock lock(&running_mu_);
    running_ = exec->get();
    interrupted_ = false;
  }
  Status st = (*exec)->AwaitTermination();
  {
    // Interrupt() holds the lock while it stops the execution: it is not destroyed under it.
    MutexLock lock(&running_mu_);
    running_ = nullptr;
    if (interrupted_ && st.ok()) {
      st = Status::Cancelled(
          "interrupted: stopped at a batch boundary before batch " +
          std::to_string((*exec)->NextBatchId().value()) +
          " (the batches before it are committed; the next REFRESH continues from there)");
    }
    interrupted_ = false;
  }
  if (st.ok()) {
    node_watermarks_[Key(def)] = (*exec)->NodeWatermarksMs();
    last_status_[Key(def)] = "ok";
  } else {
    // An injected crash stands for the death of the process: nothing in memory survives.
    node_watermarks_.erase(Key(def));
    last_status_[Key(def)] = "failed: " + st.ToString();
  }
  return st;
}

void StreamingTableManager::Interrupt() {
  MutexLock lock(&running_mu_);
  if (running_ == nullptr) return;
  interrupted_ = true;
  (void)running_->Stop();  // OK also when the query already ended
}

Result<engine::Batch> StreamingTableManager::Refresh(const RefreshStreamingTableStatement& s) {
  const std::string name = NormalizeTableName(s.name);
  const std::string ctx = "REFRESH STREAMING TABLE " + name;
  SLUICE_ASSIGN_OR_RETURN(std::optional<StreamingDefinition> table,
                          catalog_.Find(StreamingDefinition::Kind::kTable, name));
  std::vector<StreamingDefinition> queries;
  if (table && table->query) queries.push_back(*table);
  SLUICE_ASSIGN_OR_RETURN(std::vector<StreamingDefinition> flows,
                          catalog_.List(StreamingDefinition::Kind::kFlow));
  for (auto& f : flows) {
    if (f.target == name) queries.push_back(std::move(f));
  }
  if (!table) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<SinkDefinition> sink, sinks_.Find(name));
    if (sink) {
      return Status::InvalidArgument(ctx + ": " + name + " is a sink (REFRESH SINK " + name + ")");
    }
  }
  if (!table && queries.empty()) {
    return Status::NotFound(ctx + ": " + name + " is not a streaming table");
  }
  for (const StreamingDefinition& def : queries) {
    stream::Trigger trigger = stream::Trigger::AvailableNow();
    if (def.trigger && def.trigger->kind == stream::TriggerKind::kOnce) {
      trigger = stream::Trigger::Once();
    }
    SLUICE_RETURN_NOT_OK_CTX(RunToEnd(def, trigger), ctx);
  }
  return engine::Batch();
}

Result<std::vector<StreamingDefinition>> StreamingTableManager::ListDefinitions() const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<StreamingDefinition> all,
                          catalog_.List(StreamingDefinition::Kind::kTable));
  SLUICE_ASSIGN_OR_RETURN(std::vector<StreamingDefinition> flows,
                          catalog_.List(StreamingDefinition::Kind::kFlow));
  for (auto& f : flows) all.push_back(std::move(f));
  return all;
}

Result<engine::Batch> StreamingTableManager::Show(engine::Connection* conn) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<StreamingDefinition> defs, ListDefinitions());
  std::vector<std::vector<std::optional<std::string>>> rows;
  for (const StreamingDefinition& def : defs) {
    const std::string checkpoint = catalog_.CheckpointOf(def);
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> progress,
                            ReadBatchProgress(*options_.fs, checkpoint));
    std::optional<std::string> last_batch;
    if (!progress.empty()) {
      SLUICE_ASSIGN_OR_RETURN(stream::StreamingQueryProgress p,
                              stream::ParseProgressJson(progress.back()));
      last_batch = std::to_string(p.batch_id);
    }
    std::string status = def.query ? (progress.empty() ? "new" : "idle") : "no query";
    if (auto it = last_status_.find(Key(def)); it != last_status_.end() && it->second != "ok") {
      status = it->second;
    }
    std::string name = def.kind == StreamingDefinition::Kind::kFlow
                           ? def.name + " (flow into " + def.target + ")"
                           : def.name;
    rows.push_back({name, status, last_batch, TriggerText(def.trigger), checkpoint});
  }
  return LiteralRows(
      conn, {{"name"}, {"status"}, {"last_batch", "BIGINT"}, {"trigger"}, {"checkpoint"}}, rows);
}

Result<std::string> StreamingTableManager::ProgressSql(const std::string& name) {
  const std::string lower = NormalizeTableName(name);
  SLUICE_ASSIGN_OR_RETURN(std::optional<StreamingDefinition> def,
                          catalog_.Find(StreamingDefinition::Kind::kTable, lower));
  if (!def) {
    SLUICE_ASSIGN_OR_RETURN(def, catalog_.Find(StreamingDefinition::Kind::kFlow, lower));
  }
  if (!def) {
    return Status::NotFound("streaming_progress('" + name + "'): " + name +
                            " is not a streaming table or flow");
  }
  const std::string checkpoint = catalog_.CheckpointOf(*def);
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> progress,
                          ReadBatchProgress(*options_.fs, checkpoint));
  return ProgressRowsSql(progress, checkpoint);
}

Result<bool> StreamingTableManager::DropIfStreaming(const std::string& name) {
  const std::string lower = NormalizeTableName(name);
  SLUICE_ASSIGN_OR_RETURN(std::optional<StreamingDefinition> def,
                          catalog_.Find(StreamingDefinition::Kind::kTable, lower));
  if (!def) return false;
  SLUICE_ASSIGN_OR_RETURN(std::vector<StreamingDefinition> flows,
                          catalog_.List(StreamingDefinition::Kind::kFlow));
  for (const auto& f : flows) {
    if (f.target == lower) {
      SLUICE_RETURN_NOT_OK(catalog_.Remove(StreamingDefinition::Kind::kFlow, f.name));
      node_watermarks_.erase(Key(f));
      last_status_.erase(Key(f));
    }
  }
  const std::string checkpoint = catalog_.TableCheckpoint(lower);
  SLUICE_ASSIGN_OR_RETURN(bool exists, options_.fs->Exists(checkpoint));
  if (exists) {
    SLUICE_RETURN_NOT_OK(options_.fs->DeleteRecursive(checkpoint));
  }
  SLUICE_RETURN_NOT_OK(catalog_.Remove(StreamingDefinition::Kind::kTable, lower));
  node_watermarks_.erase(Key(*def));
  last_status_.erase(Key(*def));
  return true;
}

}  // namespace sluice::sql
