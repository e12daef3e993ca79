// DataFrame: a relational query over batch or streaming inputs, built by transformations whose
// expressions are SQL strings run by the engine (DuckDB's SQL dialect).
//
//   sluice::DataFrame events = session->ReadStream().Format("delta").Load("/wh/events");
//   sluice::DataFrame clicks = events.Where("kind = 'click'")
//                                    .WithColumn("day", "CAST(ts AS DATE)")
//                                    .SelectExpr({"user_id", "day", "upper(page) AS page"});
//   clicks.IsStreaming();  // true: it reads a stream; start it with clicks.WriteStream()...
//
// A frame is batch when all its inputs are batch (Session::Sql, Session::Table, a foreachBatch
// micro-batch) and streaming when any input is a stream (Session::ReadStream). Both are the same
// type with the same transformations; a batch frame is run with Collect/Count/Write, a
// streaming one with WriteStream().Start().
//
// Errors: a transformation never fails on the spot. Each one is checked as soon as the schemas
// of the frame's inputs are known (always for batch frames; for streams whose schema is known
// when they are loaded: memory, rate, Delta, files with a schema); an invalid frame keeps its
// first error, returns it from status(), and every later transformation and action returns it
// too. A streaming frame whose input schema is not known yet (files without a schema) is checked
// when its query starts (DataStreamWriter::Start).
//
// Stateful transformations of a stream (GroupBy/Agg, GroupBy/TransformWithState, DropDuplicates,
// DropDuplicatesWithinWatermark, a Join of two streams) run as Spark's stateful operators with
// their state in the checkpoint (docs/cpp-api.md, "Stateful streams"). They are checked when the
// query starts: DataStreamWriter::Start refuses what the output mode does not support, with
// Spark's reason (e.g. append mode aggregation without a watermark). Over batch frames they are
// plain batch operations and WithWatermark has no effect.
//
// Ownership: a DataFrame is a small immutable value that shares its plan; copies are cheap. It
// keeps the session's engine (and the memory streams and memory sinks it reads) alive, so it
// may outlive the Session object.
// Thread safety: const methods may be called from several threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/result.h"
#include "sluice/rows.h"
#include "sluice/stateful_processor.h"

namespace sluice {

namespace api {
struct FrameNode;     // internal: the frame's plan
struct SessionState;  // internal: the session's engine, warehouse, registries
struct FrameAccess;   // internal
}  // namespace api

class DataStreamWriter;
class DataFrameWriter;
class GroupedData;
enum class OutputMode;  // sluice/query_types.h

class DataFrame {
 public:
  // An invalid frame (status(): InvalidArgument "empty DataFrame"); assign a real one.
  DataFrame();

  // OK, or the first error of the transformations that built this frame.
  const Status& status() const;
  bool ok() const { return status().ok(); }
  // True when the frame reads a stream (a ReadStream() input).
  bool IsStreaming() const;

  // --- transformations (never fail on the spot; see "Errors" above) ---

  // Columns by name ("*" for all). Names are quoted, so they are matched exactly as SQL's
  // quoted identifiers (case-insensitively in DuckDB).
  DataFrame Select(const std::vector<std::string>& columns) const;
  // SQL expressions: {"id", "upper(name) AS name", "price * qty AS total"}.
  DataFrame SelectExpr(const std::vector<std::string>& exprs) const;
  // Rows for which the SQL condition holds ("amount > 0 AND kind = 'click'"). Filter = Where.
  DataFrame Where(const std::string& condition) const;
  DataFrame Filter(const std::string& condition) const { return Where(condition); }
  // Adds the column `name` = SQL `expr`, or replaces it (same position) when it exists.
  DataFrame WithColumn(const std::string& name, const std::string& expr) const;
  // Drops the named columns (unknown names: InvalidArgument).
  DataFrame Drop(const std::vector<std::string>& columns) const;
  // Names this frame for the condition of a Join ("l.id = r.id").
  DataFrame Alias(const std::string& alias) const;
  // Joins with `right` on a SQL condition over the two aliases (Alias(); unaliased frames are
  // "l" and "r"). `how`: "inner" (default), "left", "right", "full", "semi", "anti", "cross"
  // (spellings "left_outer", "leftsemi" etc. work). Output: the left columns, then the right's.
  // The aliases may qualify columns in the condition and in the transformation right after
  // the Join (Select/SelectExpr/Where/WithColumn/Drop/GroupBy); later transformations see the
  // output columns by name.
  // A stream joined with a batch frame reads the batch frame's latest data in every micro-batch
  // (a stream-static join). A join of two streams is a stream-stream join: inner, or outer /
  // semi with watermarks on both sides and a time-range condition (Spark's rules), e.g.
  //   imps.WithWatermark("its", "2 hours").Alias("i").Join(
  //       clicks.WithWatermark("cts", "3 hours").Alias("c"),
  //       "c.ad_id = i.ad_id AND c.cts BETWEEN i.its AND i.its + INTERVAL 1 HOUR", "left")
  DataFrame Join(const DataFrame& right, const std::string& condition,
                 const std::string& how = "inner") const;
  // Joins on equal columns of the same names; each key column appears once (SQL USING).
  DataFrame Join(const DataFrame& right, const std::vector<std::string>& using_columns,
                 const std::string& how = "inner") const;
  // Every row of both frames, columns matched by position (Spark's union, SQL UNION ALL).
  DataFrame Union(const DataFrame& other) const;
  // Every row of both frames, columns matched by name; missing columns are NULL.
  DataFrame UnionByName(const DataFrame& other) const;
  // Groups by SQL expressions (then Agg or Count). Over a stream a key may be a time window of
  // the event-time column: "window(ts, '5 minutes')" (tumbling), "window(ts, '10 minutes',
  // '5 minutes')" (sliding), "session_window(ts, '5 minutes')"; its output column is the STRUCT
  // `window` (or `session_window`) with fields start and end.
  GroupedData GroupBy(const std::vector<std::string>& exprs) const;

  // --- event time and stateful streams ---

  // Declares `event_time_column` (a TIMESTAMP column of this frame) as event time with the given
  // lateness bound ("10 seconds", "1 minute"): Spark's withWatermark. The frame must read exactly
  // one stream and come before any aggregation, deduplication or stream-stream join. A bad delay
  // is the frame's error; the other checks are made at Start.
  DataFrame WithWatermark(const std::string& event_time_column, const std::string& delay) const;
  // Keeps the first row of each key (all columns when `columns` is empty); Spark's
  // dropDuplicates. On a stream the keys are kept in state: forever, or until the watermark
  // passes them when the watermarked event-time column is one of the keys.
  DataFrame DropDuplicates(const std::vector<std::string>& columns = {}) const;
  // As DropDuplicates, but a key is kept only until its first row's event time + the delay
  // passes the watermark (Spark's dropDuplicatesWithinWatermark). A stream needs WithWatermark
  // first (refused at Start otherwise).
  DataFrame DropDuplicatesWithinWatermark(const std::vector<std::string>& columns = {}) const;

  // --- actions ---

  // The output columns. For a streaming frame whose input schema is not known yet, or that is
  // stateful (aggregation, deduplication, stream-stream join): NotSupported (the schema is known
  // once its query runs).
  Result<std::vector<Column>> Schema() const;
  // Runs a batch frame and returns its rows. A streaming frame: InvalidArgument ("Queries with
  // streaming sources must be executed with WriteStream().Start()"), as Spark.
  Result<Rows> Collect() const;
  // Runs a batch frame and returns its number of rows.
  Result<int64_t> Count() const;
  // The SQL the engine runs for this frame (streams appear as __source_<i>); for messages and
  // debugging.
  Result<std::string> ToSql() const;

  // Writes a batch frame (e.g. to a Delta table with txnAppId/txnVersion from foreachBatch).
  DataFrameWriter Write() const;
  // Starts a streaming frame as a query.
  DataStreamWriter WriteStream() const;

 private:
  friend struct api::FrameAccess;
  friend class GroupedData;
  DataFrame(std::shared_ptr<api::SessionState> session, std::shared_ptr<const api::FrameNode> node,
            Status status);

  std::shared_ptr<api::SessionState> session_;
  std::shared_ptr<const api::FrameNode> node_;
  Status status_;
};

// The result of GroupBy: aggregate it with Agg or Count.
class GroupedData {
 public:
  // SQL aggregate expressions: {"count(*) AS n", "sum(amount) AS total"}. The output is the
  // grouping expressions, then the aggregates.
  DataFrame Agg(const std::vector<std::string>& aggregate_exprs) const;
  // Agg({"count(*) AS count"}).
  DataFrame Count() const;
  // Custom state per key (Spark's groupByKey(...).transformWithState(...); docs/cpp-api.md,
  // "Custom state"): `factory` makes the StatefulProcessor (sluice/stateful_processor.h) that is
  // called per key with the key's rows of each micro-batch. The GroupBy expressions must be
  // column names of the frame (they are the key). `output_schema` gives the output columns as SQL
  // column definitions ("user STRING, count BIGINT"); `output_mode` must equal the query's
  // (Append or Update). TimeMode::kEventTime needs a WithWatermark before the GroupBy.
  // `initial_state`: a batch frame with the key columns (same names and types) and the state
  // columns, given to HandleInitialState in the first batch of a new checkpoint.
  // Streaming frames only (Collect of the result is NotSupported); checked at Start.
  DataFrame TransformWithState(StatefulProcessorFactory factory, TimeMode time_mode,
                               OutputMode output_mode, const std::string& output_schema,
                               std::optional<DataFrame> initial_state = std::nullopt) const;

 private:
  friend class DataFrame;
  GroupedData(DataFrame frame, std::vector<std::string> keys)
      : frame_(std::move(frame)), keys_(std::move(keys)) {}
  DataFrame frame_;
  std::vector<std::string> keys_;
};

// Writes a batch DataFrame (Spark's DataFrameWriter). Format "delta" only.
//
//   // Idempotent per (appId, version): inside foreachBatch, exactly-once per micro-batch.
//   Status st = batch.Write().Format("delta").Mode("append")
//                   .Option("txnAppId", "orders-to-silver").Option("txnVersion", batch_id)
//                   .Save("/wh/silver");
//
// Options (names case-insensitive):
//   txnAppId, txnVersion  both or neither: the write is skipped when the table already records
//                         appId at a version >= txnVersion; otherwise the commit records it
//   mergeSchema           "true": add new columns to the table schema (default false)
//   delta.*               table properties of a table this write creates (ignored when the
//                         table exists), e.g. Option("delta.enableChangeDataFeed", "true")
// Modes: "append" (default; creates the table when absent), "overwrite" (replace all rows),
// "error"/"errorifexists" (create; AlreadyExists when the table exists).
//
// Thread safety: a builder is used by one thread.
class DataFrameWriter {
 public:
  DataFrameWriter& Format(std::string format);
  DataFrameWriter& Mode(std::string mode);
  DataFrameWriter& Option(std::string key, std::string value);
  DataFrameWriter& Option(std::string key, const char* value);
  // Other values in Spark's spelling: true / false, the integer, the double as Java prints it
  // ("0.5", "1.0", "1.0E7").
  DataFrameWriter& Option(std::string key, bool value);
  DataFrameWriter& Option(std::string key, int64_t value);
  DataFrameWriter& Option(std::string key, double value);
  template <typename T>
  requires std::is_integral_v<T> &&(!std::is_same_v<T, bool>)&&(!std::is_same_v<T, int64_t>)
      DataFrameWriter& Option(std::string key, T value) {
    return Option(std::move(key), static_cast<int64_t>(value));
  }
  DataFrameWriter& PartitionBy(std::vector<std::string> columns);
  // Writes to the Delta table at `path`. Errors: the frame's error, a streaming frame
  // (InvalidArgument: use WriteStream), bad options, and the write's own errors.
  Status Save(const std::string& path);
  // Writes to the warehouse table `name` (<warehouse>/<name>).
  Status SaveAsTable(const std::string& name);

 private:
  friend class DataFrame;
  explicit DataFrameWriter(DataFrame frame) : frame_(std::move(frame)) {}
  DataFrame frame_;
  std::string format_ = "delta";
  std::string mode_ = "append";
  std::map<std::string, std::string> options_;
  std::vector<std::string> partition_by_;
};

}  // namespace sluice
