// StreamingTableManager::CheckDefinition (streaming_table_manager.h): a streaming table's or
// flow's query bound against its inputs' schemas by running its plan once over empty inputs in
// a scratch directory; nothing of the warehouse is written.
#include <stdlib.h>

#include <filesystem>
#include <set>
#include <utility>

#include "common/strings.h"
#include "delta/changes.h"
#include "delta/schema.h"
#include "delta/schema_evolution.h"
#include "delta/table.h"
#include "fs/scratch_dir.h"
#include "sinks/blackhole_sink.h"
#include "sources/kafka/kafka_source.h"
#include "sources/source_factory.h"
#include "sources/source_util.h"
#include "sql/checkpoint_resume_check.h"
#include "sql/pipeline_expectation_sink.h"
#include "sql/pipeline_references.h"
#include "sql/streaming_table_manager.h"
#include "sql/streaming_table_manager_internal.h"
#include "sql/table_statement_executor.h"

namespace sluice::sql {
namespace {

// Derivations of an input from a stored definition that reads another one, at most.
constexpr int kMaxDepth = 8;

constexpr std::string_view kCheckScratchPrefix = "sluice-check";

// Copies the files under `from` (on `fs`) to the local directory `to`: a source's private logs
// in an existing checkpoint (its persisted schema), read by a source opened on the copy.
Status CopyTree(fs::FileSystem& fs, const std::string& from, const std::string& to) {
  SLUICE_ASSIGN_OR_RETURN(bool exists, fs.Exists(from));
  if (!exists) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> files, fs.ListRecursive(from));
  std::shared_ptr<fs::FileSystem> local = fs::LocalFileSystem();
  for (const fs::FileInfo& f : files) {
    if (f.path.size() <= from.size()) continue;
    SLUICE_ASSIGN_OR_RETURN(std::string data, fs.ReadFile(f.path));
    SLUICE_RETURN_NOT_OK(local->AtomicReplace(to + f.path.substr(from.size()), data, {false}));
  }
  return Status::OK();
}

// The plan's message without its batch (no batch runs in a check).
Status WithoutBatch(const Status& st) {
  std::string m = st.message();
  const std::string prefix = "running the query of batch 0: ";
  for (size_t at; (at = m.find(prefix)) != std::string::npos;) m.erase(at, prefix.size());
  return Status(st.code(), m);
}

// The expectations' own check (their conditions bound and typed) over `rows` (no rows: the
// schema is what matters), through the sink that checks them in a run.
Status CheckExpectations(const StreamingTableManager::ExpectationsOf& checked,
                         const engine::Batch& rows, sinks::OutputMode mode,
                         engine::Engine* engine) {
  if (checked.expectations.empty()) return Status::OK();
  stream::SinkFactory check = ExpectationSinkFactory(
      stream::FixedSink(std::make_shared<sinks::BlackholeSink>()), checked.dataset,
      checked.expectations, std::make_shared<ExpectationMetrics>());
  stream::SinkContext sink_context;
  sink_context.engine = engine;
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<sinks::Sink> sink, check(sink_context));
  return sink->AddBatch(BatchId(0), rows, mode);
}

// A definition that its existing checkpoint cannot continue with: `st` (InvalidArgument: the
// restart rules' refusal; other codes: the checkpoint could not be read), and what to do.
Status CannotContinue(const StreamingDefinition& def, const std::string& checkpoint,
                      const Status& st) {
  if (!st.IsInvalidArgument()) return st.WithContext("reading its checkpoint " + checkpoint);
  std::string todo =
      def.kind == StreamingDefinition::Kind::kFlow
          ? "restore the previous definition, or give the flow a new name (a new flow has its "
            "own checkpoint and reads its sources from the start)"
          : "restore the previous definition, or start the table anew: DROP TABLE " + def.name +
                " (sluice sql) removes its rows, definition and checkpoint, and the next run "
                "reprocesses its sources from the start";
  return Status::InvalidArgument("the new definition cannot continue from its checkpoint " +
                                 checkpoint + ": " + st.message() + ". To run it: " + todo);
}

}  // namespace

Result<engine::Schema> DeltaStoredSchema(const engine::Schema& schema) {
  SLUICE_ASSIGN_OR_RETURN(std::string json, delta::SchemaToJson(schema));
  SLUICE_ASSIGN_OR_RETURN(delta::DeltaSchema parsed, delta::ParseSchemaString(json));
  return parsed.fields;
}

Result<std::optional<engine::Schema>> StreamingTableManager::InputSchema(
    const std::string& name, const PendingSchemas& pending, int depth) {
  if (auto p = pending.find(name); p != pending.end()) return std::optional(p->second);
  SLUICE_ASSIGN_OR_RETURN(bool exists, options_.tables->Exists(TableName{name, false}));
  if (exists) {
    SLUICE_ASSIGN_OR_RETURN(std::string path, options_.tables->Resolve(TableName{name, false}));
    Result<std::unique_ptr<delta::DeltaTable>> table =
        delta::DeltaTable::Open(options_.fs, options_.engine, path);
    Result<std::shared_ptr<const delta::Snapshot>> snapshot =
        table.ok() ? (*table)->Latest() : table.status();
    if (snapshot.ok()) return std::optional((*snapshot)->schema.fields);
    // A _delta_log without a commit (a run killed in its table's first commit): no table yet,
    // the first batch's commit creates it, as it does without the check.
    if (!snapshot.status().IsNotFound()) return snapshot.status();
  }
  SLUICE_ASSIGN_OR_RETURN(std::optional<StreamingDefinition> def,
                          catalog_.Find(StreamingDefinition::Kind::kTable, name));
  if (!def) return std::optional<engine::Schema>();
  if (!def->columns.empty()) {
    SLUICE_ASSIGN_OR_RETURN(engine::Schema declared, ColumnDefinitionsSchema(def->columns));
    return std::optional(declared);
  }
  if (!def->query || depth >= kMaxDepth) return std::optional<engine::Schema>();
  // A stored definition that no longer binds is reported when it runs, not by its readers.
  Result<std::optional<engine::Schema>> out = CheckQuery(*def, pending, depth + 1, false);
  if (!out.ok() || !out->has_value()) return std::optional<engine::Schema>();
  Result<engine::Schema> stored = DeltaStoredSchema(**out);
  if (!stored.ok()) return std::optional<engine::Schema>();
  return std::optional(*stored);
}

Result<std::optional<engine::Schema>> StreamingTableManager::CheckQuery(
    StreamingDefinition def, const PendingSchemas& pending, int depth, bool against_checkpoint) {
  using Unknown = std::optional<engine::Schema>;
  if (!def.query) return Unknown();
  // A dataset of the pipeline, or a streaming table whose first batch has not created its table.
  auto not_created = [&](const std::string& name) {
    if (pending.count(name) > 0) return true;
    Result<bool> exists = options_.tables->Exists(TableName{name, false});
    if (!exists.ok() || *exists) return false;
    auto stored = catalog_.Find(StreamingDefinition::Kind::kTable, name);
    return stored.ok() && stored->has_value();
  };
  SLUICE_RETURN_NOT_OK(Analyze(&def, [&](const std::string& n) { return pending.count(n) > 0; }));
  // A batch relation that is no table yet (one created before the query first runs, or a
  // mistake its first batch reports, as before): nothing to bind it to.
  if (Result<QueryReads> reads = ReadsOfQuery(*def.query); reads.ok()) {
    for (const std::string& name : reads->tables) {
      if (pending.count(name) > 0 || not_created(name)) continue;
      Result<bool> exists = options_.tables->Exists(TableName{name, false});
      if (!exists.ok() || !*exists) return Unknown();
    }
  }
  SLUICE_ASSIGN_OR_RETURN(PreparedQuery prepared,
                          Prepare(def, options_.engine, *options_.tables, not_created));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<engine::Connection> conn, options_.engine->Connect());

  // The tables not created yet, by the path their name resolves to.
  std::map<std::string, std::string> names_by_path;
  std::set<std::string> candidates;
  for (const auto& [name, schema] : pending) candidates.insert(name);
  SLUICE_ASSIGN_OR_RETURN(std::vector<StreamingDefinition> stored,
                          catalog_.List(StreamingDefinition::Kind::kTable));
  for (const StreamingDefinition& s : stored) candidates.insert(s.name);
  for (const std::string& name : candidates) {
    if (!not_created(name)) continue;
    Result<std::string> path = options_.tables->Resolve(TableName{name, false});
    if (path.ok()) names_by_path[*path] = name;
  }

  // Removed when the check ends; what a killed check left, by the next one (fs/scratch_dir.h).
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<fs::ScratchDir> scratch,
                          fs::ScratchDir::Make(kCheckScratchPrefix));
  const std::string checkpoint = catalog_.CheckpointOf(def);
  std::vector<engine::Batch> inputs;
  std::vector<std::string> identities;  // what the checkpoint records of each source
  for (size_t i = 0; i < def.sources.size(); ++i) {
    const ResolvedSource& rs = def.sources[i];
    const bool delta = rs.format == "delta" || rs.format == "delta_cdf";
    auto path = rs.options.find("path");
    std::optional<std::string> identity;
    if (against_checkpoint) {
      SLUICE_ASSIGN_OR_RETURN(identity, sources::DescribeWithoutOpening(rs.format, rs.options));
      if (identity) identities.push_back(*identity);
    }
    engine::Schema schema;
    if (delta && path != rs.options.end() && names_by_path.count(path->second) > 0) {
      SLUICE_ASSIGN_OR_RETURN(Unknown known,
                              InputSchema(names_by_path[path->second], pending, depth));
      if (!known) return Unknown();
      schema = *known;
      if (rs.format == "delta_cdf") {
        engine::DataType varchar{engine::TypeId::kVarchar}, big{engine::TypeId::kBigInt},
            ts{engine::TypeId::kTimestampTz};
        schema.push_back(engine::Field{delta::kChangeTypeColumn, varchar, true});
        schema.push_back(engine::Field{delta::kCommitVersionColumn, big, true});
        schema.push_back(engine::Field{delta::kCommitTimestampColumn, ts, true});
      }
    } else if (rs.format == "kafka") {
      // Fixed, without opening a client (which would try the brokers).
      bool headers = false;
      for (const auto& [key, value] : rs.options) {
        headers = headers || (AsciiLower(key) == "includeheaders" && AsciiLower(value) == "true");
      }
      schema = sources::kafka::KafkaSource::RowSchema(headers);
    } else {
      // The source's own schema, opened on a copy of its logs in the checkpoint (a persisted
      // schema); one that cannot be opened now (no file yet, a broker down) is not checked here.
      const std::string dir = scratch->path() + "/sources/" + std::to_string(i);
      SLUICE_RETURN_NOT_OK(
          CopyTree(*options_.fs, checkpoint + "/sources/" + std::to_string(i), dir));
      sources::SourceContext ctx;
      ctx.fs = options_.fs;
      ctx.engine = options_.engine;
      ctx.checkpoint_dir = dir;
      ctx.options = rs.options;
      Result<std::unique_ptr<sources::Source>> source = sources::CreateSource(rs.format, ctx);
      if (!source.ok()) return Unknown();
      schema = (*source)->schema();
      if (!identity) identities.push_back((*source)->Description());
      (void)(*source)->Stop();
    }
    SLUICE_ASSIGN_OR_RETURN(engine::Batch empty, sources::EmptyBatch(conn.get(), schema));
    inputs.push_back(std::move(empty));
  }
  std::map<std::string, engine::Batch> empty_tables;  // by view name
  for (const DeltaReference& ref : prepared.static_tables) {
    if (ref.table.is_path) continue;
    const std::string name = NormalizeTableName(ref.table.name);
    if (!not_created(name)) continue;
    SLUICE_ASSIGN_OR_RETURN(Unknown known, InputSchema(name, pending, depth));
    if (!known) return Unknown();
    SLUICE_ASSIGN_OR_RETURN(empty_tables[ref.view_name], sources::EmptyBatch(conn.get(), *known));
  }

  plan::PlanContext context;
  context.engine = options_.engine;
  context.fs = fs::LocalFileSystem();
  context.checkpoint_root = scratch->path() + "/checkpoint";
  context.conf = SessionConf(*options_.settings);
  context.output_mode = def.output_mode;
  context.prepare_connection =
      StaticRelations(prepared, options_.fs, options_.engine, std::move(empty_tables));
  // Against the existing checkpoint: the restart rules of a real start, the plan then opened
  // and run over a copy of its operators' metadata and state schemas.
  bool resumed = false;
  if (against_checkpoint) {
    Result<std::optional<stream::ConfMap>> conf = PrepareResumeCheck(
        options_.fs, checkpoint, identities, context.conf, context.checkpoint_root);
    if (!conf.ok()) return CannotContinue(def, checkpoint, conf.status());
    if (*conf) context.conf = **conf;
    resumed = conf->has_value();
  }
  // An error naming the scratch checkpoint came from what was copied from the real one.
  auto as_checked = [&](const Status& st) {
    if (!resumed) return WithoutBatch(st);
    auto [mapped, from_checkpoint] =
        FromScratchCheckpoint(WithoutBatch(st), checkpoint, context.checkpoint_root);
    return from_checkpoint ? CannotContinue(def, checkpoint, mapped) : mapped;
  };
  plan::IncrementalPlan& plan = *prepared.planned.plan;
  SLUICE_RETURN_NOT_OK(as_checked(plan.Open(context)));
  plan::PlanInput input;
  input.sources = std::move(inputs);
  Result<plan::PlanOutput> out = plan.Execute(input);
  if (!out.ok()) return as_checked(out.status());
  SLUICE_ASSIGN_OR_RETURN(ExpectationsOf checked, ExpectationsFor(def));
  SLUICE_RETURN_NOT_OK(CheckExpectations(checked, out->rows, def.output_mode, options_.engine));
  return std::optional(out->rows.schema());
}

Result<std::optional<engine::Schema>> StreamingTableManager::CheckDefinition(
    const StreamingStatement& statement, const PendingSchemas& pending, bool against_checkpoint) {
  using Unknown = std::optional<engine::Schema>;
  const auto* table = std::get_if<CreateStreamingTableStatement>(&statement);
  const auto* flow = std::get_if<CreateFlowStatement>(&statement);
  if (table == nullptr && flow == nullptr) return Unknown();
  const StreamingDefinition def = table ? TableDefinition(*table) : FlowDefinition(*flow);
  SLUICE_RETURN_NOT_OK(CheckTrigger(def));
  Unknown declared;
  if (!def.columns.empty()) {
    SLUICE_ASSIGN_OR_RETURN(declared, ColumnDefinitionsSchema(def.columns));
  }
  if (table && !def.query && declared && !def.expectations.empty()) {
    // A table that only flows fill: its expectations are checked over its declared columns.
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<engine::Connection> conn, options_.engine->Connect());
    SLUICE_ASSIGN_OR_RETURN(engine::Batch empty, sources::EmptyBatch(conn.get(), *declared));
    SLUICE_RETURN_NOT_OK(CheckExpectations(ExpectationsOf{def.name, def.expectations}, empty,
                                           def.output_mode, options_.engine));
  }
  SLUICE_ASSIGN_OR_RETURN(Unknown output, CheckQuery(def, pending, 0, against_checkpoint));
  if (!output) return table ? declared : Unknown();
  if (flow && def.auto_cdc) return Unknown();  // the AUTO CDC checks are CREATE FLOW's
  if (flow) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<SinkDefinition> sink, sinks_.Find(def.target));
    if (sink) return Unknown();
  }
  // What the target table holds: the pipeline's schema of it, else the existing table's (a
  // flow's target or a table redefined), else its declared columns.
  Unknown target;
  if (flow) {
    if (auto p = pending.find(def.target); p != pending.end()) target = p->second;
  }
  SLUICE_ASSIGN_OR_RETURN(bool exists, options_.tables->Exists(TableName{def.target, false}));
  if (!target && exists) {
    SLUICE_ASSIGN_OR_RETURN(target, InputSchema(def.target, {}, kMaxDepth));
  }
  if (!target) target = declared;
  const std::string into = "its query's output cannot be written to the table " + def.target;
  if (target) {
    // The sink's rule: a table without declared columns follows its query (new columns added).
    const bool merge = table != nullptr && def.columns.empty();
    Result<delta::WriteSchemaPlan> write = delta::PlanWriteSchema(*target, *output, merge);
    if (!write.ok()) return write.status().WithContext(into);
    if (table) return declared ? declared : Unknown(write->table_schema);
    return Unknown();
  }
  Result<engine::Schema> stored = DeltaStoredSchema(*output);
  if (!stored.ok()) return stored.status().WithContext(into);
  return table ? Unknown(*stored) : Unknown();
}

}  // namespace sluice::sql
