// Internals of the C++ API (include/sluice/): the session's state, a DataFrame's plan tree and
// how it becomes engine SQL. Not a public header.
//
// A DataFrame is a tree of FrameNodes. Leaves are inputs (a SQL text, a stream, a batch of rows,
// a Delta table, a memory sink); inner nodes are the transformations. Compile() turns a tree into
// one SQL SELECT for the engine, in which stream i is the relation __source_<i> (the name
// plan::SqlPlan registers each source's micro-batch under), and lists what must be made
// readable on the connection before that SQL runs (registered batches, Delta table views).
//
// Thread safety: SessionState is thread-safe (mu guards its maps, SLUICE_GUARDED_BY; it is held
// only to read or change them); FrameNodes are immutable.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "common/result.h"
#include "common/strings.h"
#include "delta/table.h"
#include "engine/engine.h"
#include "fs/file_system.h"
#include "sinks/memory_sink.h"
#include "sluice/dataframe.h"
#include "sluice/rows.h"
#include "sluice/session.h"
#include "sluice/streaming.h"
#include "sources/memory_source.h"
#include "stream/listener_bus.h"

namespace sluice::api {

// One streaming input (a ReadStream().Load() or a MemoryStream).
struct StreamInput {
  std::string format;                             // a sources::CreateSource format, or "memory"
  std::map<std::string, std::string> options;     // as the user wrote them (path included)
  std::optional<engine::Schema> schema;           // when known before the query starts
  std::shared_ptr<sources::MemorySource> memory;  // format "memory"
  std::string description;                        // for messages: "delta /wh/events"
};

// GroupBy(...).TransformWithState(...) (transform_with_state_plan.h).
struct TransformWithStateSpec {
  StatefulProcessorFactory factory;
  TimeMode time_mode = TimeMode::kNone;
  OutputMode output_mode = OutputMode::kAppend;
  std::string output_schema;               // SQL column definitions
  std::optional<DataFrame> initial_state;  // a batch frame
};

struct FrameNode {
  enum class Kind {
    kSql,         // text: a query; tables: the warehouse tables / memory sinks it names
    kStream,      // stream
    kBatch,       // batch
    kDeltaTable,  // path
    kMemorySink,  // memory_sink
    kSelect,      // list: SQL expressions
    kWhere,       // text: condition
    kWithColumn,  // name, text: expression
    kDrop,        // list: column names
    kAlias,       // name
    kJoin,        // children[0..1], text: condition, how, list: USING columns (when using_join)
    kUnion,       // children[0..1]; by_name
    kAggregate,   // list: keys, list2: aggregates
    kWatermark,   // name: event-time column, text: the delay as written, delay_ms
    kDedup,       // list: key columns (empty: all); how: "" or "within_watermark"
    kTransformWithState,  // list: key columns; tws: the processor and its options
  };
  Kind kind = Kind::kSql;
  std::vector<std::shared_ptr<const FrameNode>> children;
  std::string text, name, how, path;
  std::vector<std::string> list, list2;
  int64_t delay_ms = 0;
  bool using_join = false;
  bool by_name = false;
  std::shared_ptr<StreamInput> stream;
  std::shared_ptr<const TransformWithStateSpec> tws;  // kTransformWithState
  engine::Batch batch;
  std::shared_ptr<sinks::MemorySink> memory_sink;
  // kSql: name as written in the text (lower-cased) -> Delta path or memory sink.
  std::map<std::string, std::string> delta_tables;
  std::map<std::string, std::shared_ptr<sinks::MemorySink>> memory_tables;
};
using NodePtr = std::shared_ptr<const FrameNode>;

// What Compile produced: the SQL and what must be readable when it runs.
struct CompiledQuery {
  std::string sql;
  std::vector<std::shared_ptr<StreamInput>> streams;             // stream i = __source_<i>
  std::vector<std::pair<std::string, engine::Batch>> batches;    // registered under the name
  std::vector<std::pair<std::string, std::string>> delta_views;  // view name -> Delta path
  std::vector<std::pair<std::string, std::shared_ptr<sinks::MemorySink>>> memory_views;
  // Views over static sub-frames (plan mode), created after the batches and Delta views.
  std::vector<std::pair<std::string, std::string>> static_views;  // view name -> SQL
  bool has_aggregate = false;
  bool has_stream_join = false;  // a join with streams on both sides

  // Plan mode only: stream relation i of the streaming planner (view __stream_<i>).
  struct Relation {
    std::string alias;                     // as the SQL names __stream_<i>
    std::optional<std::string> watermark;  // the event-time column of a WithWatermark
    int64_t delay_ms = 0;
    // WithWatermark: SQL over __source_<i> (the raw source rows) giving the relation's rows;
    // empty: the raw rows.
    std::string pre_sql;
  };
  std::vector<Relation> relations;  // one per stream, same order
};

// How Compile treats streams.
enum class CompileMode {
  // Stream i is the relation __source_<i> (plan::SqlPlan's names); WithWatermark is a no-op.
  kSql,
  // For plan::PlanStreamingQuery: stream i (or the WithWatermark over it) is the relation
  // __stream_<i> (CompiledQuery::relations), static sub-frames become views (static_views), a
  // GroupBy groups by position and DropDuplicates become DISTINCT / QUALIFY.
  kStreamingPlan,
};

class ListenerAdapter;
struct QueryState;

struct SessionState {
  std::string warehouse;
  bool no_data_batches = true;  // SessionOptions::no_data_batches
  std::shared_ptr<fs::FileSystem> fs;
  std::unique_ptr<engine::Engine> engine;
  std::shared_ptr<stream::ListenerBus> bus;

  // Guards the maps below; held only to read or change them, never while calling out (opening a
  // table, starting a query, a listener).
  mutable Mutex mu;
  // by name
  std::map<std::string, std::shared_ptr<sources::MemorySource>> memory_streams
      SLUICE_GUARDED_BY(mu);
  // by lower-cased name
  std::map<std::string, std::shared_ptr<sinks::MemorySink>> memory_sinks SLUICE_GUARDED_BY(mu);
  std::map<std::string, std::shared_ptr<delta::DeltaTable>> tables
      SLUICE_GUARDED_BY(mu);  // by path
  std::map<const StreamingQueryListener*, std::shared_ptr<ListenerAdapter>> listeners
      SLUICE_GUARDED_BY(mu);
  std::vector<std::weak_ptr<StreamingQuery>> queries SLUICE_GUARDED_BY(mu);
  int64_t next_name SLUICE_GUARDED_BY(mu) = 0;

  // A fresh unique suffix for internal relation names.
  int64_t NextId();
  // The table's directory: <warehouse>/<lower-cased name>, or its LOCATION record
  // (delta::ResolveWarehouseTable, as SQL resolves it).
  Result<std::string> TablePath(const std::string& name) const;
  // The cached reader of the Delta table at `path`.
  Result<std::shared_ptr<delta::DeltaTable>> DeltaTableAt(const std::string& path);
  // Names of the warehouse's Delta tables and LOCATION records (delta::ListWarehouseTables).
  Result<std::set<std::string>> WarehouseTableNames() const;
  std::shared_ptr<sinks::MemorySink> FindMemorySink(const std::string& name) const;
};

// Stream schemas by stream index, for Compile; a missing entry uses StreamInput::schema.
using StreamSchemas = std::map<size_t, engine::Schema>;

// Compiles `node` to SQL. Registers what the SQL reads on `conn` as it goes (schemas of
// sub-frames are needed for WithColumn), with each stream as an empty batch of its schema.
// NotSupported with "schema of stream" in the message when a stream's schema is unknown.
Result<CompiledQuery> Compile(SessionState* session, const NodePtr& node, engine::Connection* conn,
                              const StreamSchemas& schemas = {},
                              CompileMode mode = CompileMode::kSql);
// Registers the batches and (re)creates the Delta views (latest snapshots) and memory sink
// views of `q` on `conn`.
Status Prepare(SessionState* session, const CompiledQuery& q, engine::Connection* conn);
// Whether the tree reads a stream / how many stream leaves it has.
bool HasStream(const NodePtr& node);
size_t CountStreams(const NodePtr& node);
// Whether the tree has a stateful node over a stream (an aggregation, deduplication or
// TransformWithState of a streaming frame, a join of two streams).
bool HasStatefulStreamNode(const NodePtr& node);
// The WithWatermark nodes over streams of the tree, in stream order.
std::vector<const FrameNode*> WatermarkNodes(const NodePtr& node);

// Public <-> internal conversions.
struct RowsAccess {
  static Rows Make(engine::Batch batch);
  static const engine::Batch& BatchOf(const Rows& rows);
};
struct FrameAccess {
  static DataFrame Make(std::shared_ptr<SessionState> session, NodePtr node);
  static DataFrame Error(std::shared_ptr<SessionState> session, Status status);
  static const NodePtr& Node(const DataFrame& frame) { return frame.node_; }
  static const std::shared_ptr<SessionState>& Session(const DataFrame& frame) {
    return frame.session_;
  }
  static DataStreamReader Reader(std::shared_ptr<SessionState> session) {
    return DataStreamReader(std::move(session));
  }
  static std::shared_ptr<StreamingQuery> Query(std::unique_ptr<QueryState> state);
  static const std::shared_ptr<SessionState>& State(const sluice::Session& session) {
    return session.state_;
  }
  static QueryState* State(const StreamingQuery& q) { return q.state_.get(); }
};

// Runs a batch frame: compiles and queries on a new connection.
Result<engine::Batch> RunBatch(const DataFrame& frame);

// A boolean option's value ("true" / "false", any case); InvalidArgument naming `key` otherwise.
Result<bool> ParseBoolOption(const std::string& key, const std::string& value);

// An option value as Spark spells it: "true" / "false"; a double as Java's Double.toString
// prints it ("0.5", "1.0", "1.0E7", "1.0E-4"; "NaN", "Infinity").
std::string OptionText(bool value);
std::string OptionText(double value);

// The public progress of the engine's record: its top-level figures, and its JSON as Json().
sluice::StreamingQueryProgress PublicProgress(const stream::StreamingQueryProgress& progress);

}  // namespace sluice::api
