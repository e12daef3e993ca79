// Streaming: DataStreamReader (Session::ReadStream), DataStreamWriter (DataFrame::WriteStream),
// StreamingQuery, Trigger and StreamingQueryListener, shaped like Spark's Structured Streaming.
//
//   auto events = session->ReadStream().Format("files").Option("format", "json")
//                     .Schema("id BIGINT, kind STRING, ts TIMESTAMP").Load("/landing/events");
//   SLUICE_ASSIGN_OR_RETURN(
//       std::shared_ptr<sluice::StreamingQuery> q,
//       events.Where("kind = 'click'").WriteStream()
//           .Format("delta")
//           .Option("checkpointLocation", "/wh/_checkpoints/clicks")
//           .Trigger(sluice::Trigger::AvailableNow())
//           .Start("/wh/clicks"));
//   SLUICE_RETURN_NOT_OK(q->AwaitTermination());
//
// Semantics are Spark's micro-batch model (docs/micro-batch-loop.md): each batch is recorded in
// the checkpoint (offsets/N before it runs, commits/N after the sink took it); a restart on the
// same checkpoint re-runs an uncommitted batch with the same input and the same batch id.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/dataframe.h"
#include "sluice/query_types.h"
#include "sluice/result.h"

namespace sluice {

namespace api {
struct QueryState;  // internal: the running micro-batch execution
}

// When a streaming query runs its micro-batches. A value; errors (a bad interval, Continuous)
// are reported by DataStreamWriter::Start.
class Trigger {
 public:
  enum class Kind { kDefault, kProcessingTime, kAvailableNow, kOnce, kContinuous };

  // The next batch as soon as the previous one ended and new data is there (idle polls back off
  // 10 -> 100 ms). The default.
  static Trigger Default() { return Trigger(Kind::kDefault, 0, ""); }
  // Batches start on the interval's slots; an overrun starts the next batch at once.
  static Trigger ProcessingTime(std::chrono::milliseconds interval) {
    return Trigger(Kind::kProcessingTime, interval.count(), "");
  }
  // "10 seconds", "500 milliseconds", "1 minute", "INTERVAL 2 SECONDS".
  static Trigger ProcessingTime(std::string interval) {
    return Trigger(Kind::kProcessingTime, 0, std::move(interval));
  }
  // Everything available at the start, in batches that respect the read limits, then stop.
  static Trigger AvailableNow() { return Trigger(Kind::kAvailableNow, 0, ""); }
  // One batch of everything available, then stop. Deprecated (as in Spark): use AvailableNow.
  static Trigger Once() { return Trigger(Kind::kOnce, 0, ""); }
  // Spark's continuous processing. Sluice runs micro-batches only: Start refuses it
  // (NotSupported) with advice.
  static Trigger Continuous(std::chrono::milliseconds interval) {
    return Trigger(Kind::kContinuous, interval.count(), "");
  }

  Kind kind() const { return kind_; }
  // The interval in ms when given as a duration (0 otherwise).
  int64_t interval_ms() const { return interval_ms_; }
  // The interval when given as text (empty otherwise).
  const std::string& interval_text() const { return interval_text_; }

 private:
  Trigger(Kind kind, int64_t interval_ms, std::string interval_text)
      : kind_(kind), interval_ms_(interval_ms), interval_text_(std::move(interval_text)) {}
  Kind kind_;
  int64_t interval_ms_;
  std::string interval_text_;
};

// Builds a streaming DataFrame (Spark's DataStreamReader); from Session::ReadStream().
//
// Formats and their options (option names are case-insensitive; docs/sources.md has defaults):
//   "delta"               Load(path) or Table(name); startingVersion, startingTimestamp,
//                         maxFilesPerTrigger, maxBytesPerTrigger, skipChangeCommits
//   "delta_cdf"           the change data feed: readChangeFeed, startingVersion | startingTimestamp
//                         (also Format("delta") with Option("readChangeFeed", "true"))
//   "files", "cloudFiles" Load(dir); format (json | csv | parquet), schema (or Schema()),
//                         maxFilesPerTrigger, maxBytesPerTrigger, recursive, schemaEvolutionMode,
//                         badRecordsPath, header, delimiter; rows get a _rescued_data column
//   "json", "csv", "parquet"  as "files" with that format option (Spark's
//                         readStream.format("json")): Load(dir), the files options
//   "rate"                Load() (no path); rowsPerSecond, numPartitions, rampUpTime
//   "memory"              Load(name) of a stream made by Session::CreateMemoryStream
// Unknown formats and options are reported (InvalidArgument) by the frame's status().
//
// Thread safety: a builder is used by one thread.
class DataStreamReader {
 public:
  DataStreamReader& Format(std::string format);
  DataStreamReader& Option(std::string key, std::string value);
  DataStreamReader& Option(std::string key, const char* value);
  // Other values in Spark's spelling: true / false, the integer, the double as Java prints it
  // ("0.5", "1.0", "1.0E7").
  DataStreamReader& Option(std::string key, bool value);
  DataStreamReader& Option(std::string key, int64_t value);
  DataStreamReader& Option(std::string key, double value);
  template <typename T>
  requires std::is_integral_v<T> &&(!std::is_same_v<T, bool>)&&(!std::is_same_v<T, int64_t>)
      DataStreamReader& Option(std::string key, T value) {
    return Option(std::move(key), static_cast<int64_t>(value));
  }
  DataStreamReader& Options(const std::map<std::string, std::string>& options);
  // The input schema as SQL column definitions: "id BIGINT, name STRING, ts TIMESTAMP".
  DataStreamReader& Schema(std::string ddl);
  // A stream of the input at `path` (rate: Load() without a path).
  DataFrame Load(const std::string& path = "");
  // A stream of the warehouse Delta table `name` (format delta).
  DataFrame Table(const std::string& name);

 private:
  friend struct api::FrameAccess;
  explicit DataStreamReader(std::shared_ptr<api::SessionState> session)
      : session_(std::move(session)) {}
  std::shared_ptr<api::SessionState> session_;
  std::string format_ = "delta";
  std::map<std::string, std::string> options_;
  std::optional<std::string> schema_;
};

class StreamingQuery;

// The function of ForeachBatch: `batch` is a batch DataFrame over the micro-batch's rows (run it
// with Collect, Write, transformations...) and `batch_id` the micro-batch's id. Return a non-OK
// Status to fail the batch and the query. A restart re-runs an uncommitted batch with the same
// rows and id, so the function must be idempotent per batch id for exactly-once results (see
// docs/cpp-api.md, "foreachBatch and exactly-once"). It runs on the query's thread; `batch` is
// valid during the call only.
using ForeachBatchFunction = std::function<Status(const DataFrame& batch, int64_t batch_id)>;

// Starts a streaming DataFrame as a query (Spark's DataStreamWriter); from
// DataFrame::WriteStream().
//
// Sinks (Format):
//   "delta" (default)  Start(path) or ToTable(name); exactly-once: each batch is one Delta commit
//                      carrying txn(appId = query id, version = batch id). Options: mergeSchema;
//                      PartitionBy. Append; Complete (each batch overwrites the table); Update
//                      (a MERGE by the grouping or deduplication keys; a global aggregation,
//                      without keys, keeps the table at its one row; a stateless query
//                      appends).
//   "console"          prints each batch (Spark's layout); options numRows (20), truncate (true).
//                      At-least-once.
//   "memory"           keeps the rows in the session; read them with Session::Table(<query
//                      name>) (QueryName is required). Exactly-once within the process.
//   "kafka"            Start(); records from the columns value [, key, topic, partition];
//                      options kafka.* (kafka.bootstrap.servers required), topic. At-least-once;
//                      exactly-once with kafka.transactional.id (+ transactionMarkerTopic), one
//                      Kafka transaction per batch (docs/kafka.md "Sink").
//   ForeachBatch(fn)   calls fn per batch (the format is then ignored). At-least-once by itself.
// Options: checkpointLocation (required, except for ToTable, where it defaults to
// <warehouse>/_checkpoints/<table>, and for console and memory sinks, which get a new temporary
// directory when it is not given), and the sink's options above.
//
// Thread safety: a builder is used by one thread.
class DataStreamWriter {
 public:
  DataStreamWriter& Format(std::string format);
  DataStreamWriter& OutputMode(sluice::OutputMode mode);
  // "append", "update", "complete" (case-insensitive).
  DataStreamWriter& OutputMode(const std::string& mode);
  DataStreamWriter& Option(std::string key, std::string value);
  DataStreamWriter& Option(std::string key, const char* value);
  // Other values in Spark's spelling: true / false, the integer, the double as Java prints it
  // ("0.5", "1.0", "1.0E7").
  DataStreamWriter& Option(std::string key, bool value);
  DataStreamWriter& Option(std::string key, int64_t value);
  DataStreamWriter& Option(std::string key, double value);
  template <typename T>
  requires std::is_integral_v<T> &&(!std::is_same_v<T, bool>)&&(!std::is_same_v<T, int64_t>)
      DataStreamWriter& Option(std::string key, T value) {
    return Option(std::move(key), static_cast<int64_t>(value));
  }
  DataStreamWriter& Trigger(const sluice::Trigger& trigger);
  DataStreamWriter& QueryName(std::string name);
  DataStreamWriter& PartitionBy(std::vector<std::string> columns);
  DataStreamWriter& ForeachBatch(ForeachBatchFunction fn);

  // Starts the query. Everything that can be refused is refused here, synchronously: the
  // frame's error, a batch frame (InvalidArgument), what the output mode does not support
  // (InvalidArgument with Spark's reason, e.g. "Append output mode not supported when there are
  // streaming aggregations on streaming DataFrames/DataSets without watermark"), a missing
  // checkpoint location, the trigger
  // (Continuous: NotSupported), a checkpoint used by another running query (Conflict naming
  // it), a changed source or configuration for an existing checkpoint (InvalidArgument: a new
  // checkpoint is needed), the sources' and sink's options. On success the query runs on its own
  // thread. The query is stopped when the last shared_ptr to it goes away or the session ends.
  Result<std::shared_ptr<StreamingQuery>> Start();
  // Start with the sink path (Option("path", path)).
  Result<std::shared_ptr<StreamingQuery>> Start(const std::string& path);
  // Start into the warehouse Delta table `name` (created by the first batch when absent).
  Result<std::shared_ptr<StreamingQuery>> ToTable(const std::string& name);

 private:
  friend class DataFrame;
  explicit DataStreamWriter(DataFrame frame) : frame_(std::move(frame)) {}
  DataFrame frame_;
  std::string format_ = "delta";
  sluice::OutputMode mode_ = sluice::OutputMode::kAppend;
  std::optional<std::string> mode_error_;
  std::map<std::string, std::string> options_;  // keys lower-cased
  sluice::Trigger trigger_ = sluice::Trigger::Default();
  std::optional<std::string> name_;
  std::vector<std::string> partition_by_;
  ForeachBatchFunction foreach_batch_;
  std::optional<std::string> table_;
};

// A running (or ended) streaming query (Spark's StreamingQuery).
//
// Ownership: shared; the query stops (at a batch boundary) when the last reference goes away or
// its Session is destroyed.
// Thread safety: every method may be called from any thread.
class StreamingQuery {
 public:
  ~StreamingQuery();
  StreamingQuery(const StreamingQuery&) = delete;
  StreamingQuery& operator=(const StreamingQuery&) = delete;

  // The query id: stays the same across restarts on the same checkpoint.
  const std::string& Id() const;
  // The id of this run: new on every start.
  const std::string& RunId() const;
  // The QueryName, if given.
  const std::optional<std::string>& Name() const;
  // True until the query ends (stopped, finished its trigger, or failed).
  bool IsActive() const;
  // What the query is doing now (Spark's query.status; named so that it does not hide the
  // type sluice::Status inside the class).
  StreamingQueryStatus CurrentStatus() const;
  // The progress of the last micro-batch (or idle trigger); nullopt before the first. Json()
  // is the whole of it as Spark prints it.
  std::optional<StreamingQueryProgress> LastProgress() const;
  // The last (up to 100) progresses, oldest first.
  std::vector<StreamingQueryProgress> RecentProgress() const;
  // The id of the last micro-batch of this checkpoint that completed (in this run or an
  // earlier one), or nullopt before the first.
  std::optional<int64_t> LastBatchId() const;

  // Blocks until the query ends; its error if it failed (OK after Stop or the end of an
  // AvailableNow/Once trigger).
  ::sluice::Status AwaitTermination();
  // As above with a timeout: true when the query ended, false on timeout; the error if it
  // failed.
  Result<bool> AwaitTermination(std::chrono::milliseconds timeout);
  // Stops at the next batch boundary (a batch in progress completes), waits for the query
  // thread to end and releases the checkpoint. OK also when the query already ended.
  ::sluice::Status Stop();
  // Blocks until everything available at the call has been processed (a trigger that started
  // after the call found no new data) or the query ended (its error, if it failed). For tests.
  ::sluice::Status ProcessAllAvailable();
  // The error that ended the query (with the batch id and source or sink in its message), or
  // nullopt.
  std::optional<::sluice::Status> Exception() const;

 private:
  friend struct api::FrameAccess;
  explicit StreamingQuery(std::unique_ptr<api::QueryState> state);
  std::unique_ptr<api::QueryState> state_;
};

// The listener events are in sluice/query_types.h.

// Receives the events of every query of the session it is added to (Session::AddListener).
// Callbacks run on the session's listener thread, one at a time, in the order the events
// happened (for one query: Started first, Terminated last); a slow listener delays other
// listeners, never a query. Exceptions thrown by a callback are logged and dropped.
class StreamingQueryListener {
 public:
  virtual ~StreamingQueryListener() = default;
  virtual void OnQueryStarted(const QueryStartedEvent& event) { (void)event; }
  virtual void OnQueryProgress(const QueryProgressEvent& event) { (void)event; }
  virtual void OnQueryIdle(const QueryIdleEvent& event) { (void)event; }
  virtual void OnQueryTerminated(const QueryTerminatedEvent& event) { (void)event; }
};

}  // namespace sluice
