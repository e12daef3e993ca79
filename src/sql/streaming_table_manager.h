// StreamingTableManager: the streaming tables and flows of a session (docs/sql-reference.md
// "Streaming tables and flows", docs/streaming.md).
//
// - CREATE [OR REFRESH] STREAMING TABLE parses the query (plan/stream_query_parser.h), resolves
//   its STREAM relations (streaming_source_resolver.h), plans it (plan/planner.h) so that
//   unsupported operations and TRIGGER CONTINUOUS are refused here, and stores the definition
//   (streaming_table_catalog.h). It processes nothing. With column definitions the Delta table is
//   created at once; otherwise the first batch creates it. The table has the change data feed on
//   unless TBLPROPERTIES turn it off. CREATE OR REFRESH with the same definition is a no-op; with
//   another one it replaces the definition and keeps the checkpoint (the restart rules decide
//   whether the query can continue from it).
// - REFRESH STREAMING TABLE runs the table's query, then every flow into the table, in this
//   process with stream::MicroBatchExecution: TRIGGER ONCE = Trigger.Once, anything else =
//   Trigger.AvailableNow; it returns when the run ends. The per-watermark-node watermarks of each
//   query are kept here between REFRESHes (lost when the session ends, as in Spark).
//   `SET sluice.test.crashAt = '<point>'` arms the next REFRESH's first batch (one shot).
// - CREATE FLOW ... AS INSERT INTO target: an append flow with its own checkpoint.
// - CREATE FLOW ... AS AUTO CDC INTO target: a flow with its own checkpoint whose batches are
//   applied by auto_cdc_sink.h (checks and sink wiring in auto_cdc_flow.h).
// - CREATE SINK / DROP SINK / REFRESH SINK / SHOW SINKS (sink_statements.h; implemented in
//   streaming_table_manager_sinks.cc): sinks are kept in sink_catalog.h; a flow whose target is
//   a sink writes through its sink (kafka_sink_flow.h) instead of a Delta table.
// - SHOW STREAMING TABLES, streaming_progress('name'), DROP TABLE of a streaming table.
// - Start(): a query running on its own trigger, for `sluice run`.
// - CheckDefinition(): a CREATE STREAMING TABLE or CREATE FLOW checked against its inputs'
//   schemas without creating, running or writing anything (streaming_table_manager_check.cc):
//   `sluice run` checks a whole pipeline with it, CREATE checks its own statement with it.
//
// Ownership: borrows the engine, catalogs and settings of the Session that owns it.
// Thread safety: used by one thread at a time (the session's), except Interrupt(), which any
// thread may call; Start()ed executions run on their own threads and write only their
// checkpoints and tables.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "engine/engine.h"
#include "fs/file_system.h"
#include "sql/settings.h"
#include "sql/sink_catalog.h"
#include "sql/sink_statements.h"
#include "sql/streaming_statements.h"
#include "sql/streaming_table_catalog.h"
#include "sql/table_catalog.h"
#include "sql/table_statements.h"
#include "stream/micro_batch_execution.h"

namespace sluice::sql {

struct StreamingTableManagerOptions {
  std::shared_ptr<fs::FileSystem> fs;
  engine::Engine* engine = nullptr;
  const TableCatalog* tables = nullptr;
  Settings* settings = nullptr;  // read; sluice.test.crashAt is reset when consumed
  // Runs a Delta table statement (CREATE TABLE with columns, DROP TABLE) for the manager.
  std::function<Result<engine::Batch>(const TableStatement&)> run_table_statement;
};

// What Start() adds to a run.
struct StartOptions {
  // Called on the query thread after each batch (after its progress is persisted).
  std::function<void(const std::string& name, const stream::StreamingQueryProgress&)> on_progress;
  // When set, replaces the target's Delta sink (`sluice bench nexmark --sink blackhole`): the
  // query's output goes there and the target table is not written.
  stream::SinkFactory sink_factory;
};

class StreamingTableManager {
 public:
  explicit StreamingTableManager(StreamingTableManagerOptions options);

  // Runs a parsed streaming statement; returns its rows (SHOW) or an empty batch.
  Result<engine::Batch> Execute(const StreamingStatement& statement, engine::Connection* conn);

  // Runs a parsed sink statement; returns its rows (SHOW SINKS) or an empty batch.
  Result<engine::Batch> ExecuteSink(const SinkStatement& statement, engine::Connection* conn);

  // DROP TABLE support: when `name` is a streaming table, removes its definition, its flows'
  // definitions and its checkpoint (the caller drops the Delta table). Returns whether it was.
  Result<bool> DropIfStreaming(const std::string& name);

  // The SQL of the streaming_progress('name') relation. NotFound when `name` is neither a
  // streaming table nor a flow.
  Result<std::string> ProgressSql(const std::string& name);

  // The definitions of the warehouse, tables then flows, each sorted by name.
  Result<std::vector<StreamingDefinition>> ListDefinitions() const;

  // Schemas of the datasets a check reads before their tables exist (the datasets of a pipeline
  // that come before the one checked in its graph's order), by lower-cased name.
  using PendingSchemas = std::map<std::string, engine::Schema>;

  // The expectations a query's rows are checked against, and the dataset they belong to: a
  // table's own; an append flow's target table's (none for an AUTO CDC flow or a flow into a
  // sink).
  struct ExpectationsOf {
    std::string dataset;
    std::vector<Expectation> expectations;
  };

  // Checks CREATE STREAMING TABLE / CREATE FLOW `statement` (in the engine's dialect, as Session
  // hands it over) against its inputs' schemas, and creates, runs and writes nothing: its STREAM
  // relations are resolved and its query planned as CREATE does (the planner's refusals), then
  // the plan runs one batch over empty inputs of its sources' schemas (existing tables' Delta
  // schemas, `pending` for the pipeline's own datasets, a source's own schema otherwise) in a
  // scratch directory, so that an unknown column or function, a type error or a WATERMARK on a
  // non-timestamp is refused as the first batch would refuse it; its expectations are evaluated
  // over the empty output (a condition that does not bind or is not BOOLEAN), and the output is
  // checked against the target's schema (declared columns, the existing Delta table's, Delta's
  // types). Returns the schema readers of the table get (the declared columns, else the query's
  // output as Delta stores it); nullopt for a flow, for a table without a query or declared
  // columns, and when an input's schema is not known before the run (a streaming table defined
  // earlier and never refreshed, whose query cannot be checked either; a source that cannot be
  // opened now, such as read_files on a directory with no file yet): then the rest is checked
  // when the query runs.
  // With `against_checkpoint` (a pipeline's check: sluice run, --dry-run, sluice check), also
  // whether the existing checkpoint of the table or flow can continue with this definition
  // (sql/checkpoint_resume_check.h): the same sources, the same stateful operators with the
  // same state schemas; InvalidArgument "the new definition cannot continue from its checkpoint
  // <dir>: <what changed>. To run it: <what to do>". Without it (CREATE OR REFRESH in sluice
  // sql), a changed definition replaces the stored one and the restart rules decide at REFRESH.
  Result<std::optional<engine::Schema>> CheckDefinition(const StreamingStatement& statement,
                                                        const PendingSchemas& pending,
                                                        bool against_checkpoint = false);

  // Starts `def` on `trigger` (sluice run). The caller owns the execution.
  Result<std::unique_ptr<stream::MicroBatchExecution>> Start(const StreamingDefinition& def,
                                                             const stream::Trigger& trigger,
                                                             const StartOptions& start = {});

  StreamingTableCatalog& catalog() { return catalog_; }
  const SinkCatalog& sinks() const { return sinks_; }

  // Stops the REFRESH running on the session's thread at its next batch boundary (the batches
  // before it stay committed, the next REFRESH continues after them); that REFRESH then fails
  // with Cancelled. Does nothing when no REFRESH runs. Thread-safe (a Ctrl-C handler calls it).
  void Interrupt() SLUICE_EXCLUDES(running_mu_);

 private:
  Result<engine::Batch> Create(const CreateStreamingTableStatement& s);
  Result<engine::Batch> CreateFlow(const CreateFlowStatement& s);
  Result<engine::Batch> Refresh(const RefreshStreamingTableStatement& s);
  Result<engine::Batch> Show(engine::Connection* conn);
  Result<engine::Batch> CreateSink(const CreateSinkStatement& s);
  Result<engine::Batch> DropSink(const DropSinkStatement& s);
  Result<engine::Batch> RefreshSink(const RefreshSinkStatement& s);
  Result<engine::Batch> ShowSinks(engine::Connection* conn);
  // The flows whose target is `name` (lower-cased).
  Result<std::vector<StreamingDefinition>> FlowsInto(const std::string& name) const;

  // Parses, resolves and plans a query; fills def->sources. Refusals come from here.
  // `also_streaming(lower-cased name)`: a name that is a streaming table whose table does not
  // exist yet, besides those of the catalog.
  Status Analyze(StreamingDefinition* def,
                 const std::function<bool(const std::string&)>& also_streaming = {});
  // CheckDefinition's query check of `def` (a copy: its sources are resolved here); `depth`
  // bounds the derivation of inputs from stored definitions. The query's output schema, or
  // nullopt when an input's is unknown.
  Result<std::optional<engine::Schema>> CheckQuery(StreamingDefinition def,
                                                   const PendingSchemas& pending, int depth,
                                                   bool against_checkpoint);
  // The schema of the table `name` (lower-cased) for a check: `pending`, the Delta table's, or
  // derived from the stored definition of a streaming table not yet refreshed; nullopt when
  // none of them gives one.
  Result<std::optional<engine::Schema>> InputSchema(const std::string& name,
                                                    const PendingSchemas& pending, int depth);
  // Runs `def` to the end with `trigger` (REFRESH).
  Status RunToEnd(const StreamingDefinition& def, const stream::Trigger& trigger);
  Result<std::unique_ptr<stream::MicroBatchExecution>> StartExecution(
      const StreamingDefinition& def, const stream::Trigger& trigger,
      std::optional<std::string> crash_at, const StartOptions& start);
  Result<ExpectationsOf> ExpectationsFor(const StreamingDefinition& def) const;
  // Table properties of a streaming table's Delta table (the change data feed on by default).
  static std::map<std::string, std::string> TableProperties(const StreamingDefinition& def);
  std::string Key(const StreamingDefinition& def) const;

  StreamingTableManagerOptions options_;
  StreamingTableCatalog catalog_;
  SinkCatalog sinks_;
  // Per query (Key): the per-node watermarks at the end of its last REFRESH in this session.
  std::map<std::string, std::vector<std::optional<int64_t>>> node_watermarks_;
  // Per query (Key): the outcome of its last REFRESH in this session ("ok" or the error).
  std::map<std::string, std::string> last_status_;
  // The execution RunToEnd waits for, so that Interrupt() can stop it; whether it was stopped.
  Mutex running_mu_;
  stream::MicroBatchExecution* running_ SLUICE_GUARDED_BY(running_mu_) = nullptr;
  bool interrupted_ SLUICE_GUARDED_BY(running_mu_) = false;
};

}  // namespace sluice::sql
