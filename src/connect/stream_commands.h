// SessionStreams: the streaming queries of one Spark Connect session. writeStream...start()
// (WriteStreamOperationStart) becomes a Sluice streaming query of the C++ API (sluice/streaming.h:
// the same micro-batch loop, checkpoints and sinks as `sluice run`), and the StreamingQuery
// methods (StreamingQueryCommand) are answered from it.
//
// What is served (docs/pyspark.md has the table):
//   input      readStream.format(f).options(...).load([path]) and readStream.table(name), with
//              filter/where, select/selectExpr and withColumn(s) over them
//   writer     format, options (checkpointLocation, ...), outputMode, queryName, partitionBy,
//              trigger(processingTime | availableNow | once), start([path]), toTable(name)
//   relations  withWatermark, groupBy(...).agg(...) (window(...) keys included), dropDuplicates
//              ([subset]) and dropDuplicatesWithinWatermark, alias, and joins with a batch
//              DataFrame (read again at every micro-batch) or another stream, on a condition or
//              on column names (Spark's column order)
//   query      status, isActive, lastProgress, recentProgress (Sluice's progress JSON, Spark's
//              StreamingQueryProgress), awaitTermination([timeout]), processAllAvailable, stop,
//              exception
//   manager    spark.streams: active, get, awaitAnyTermination([timeout]), resetTerminated;
//              addListener/removeListener through the client's listener bus (Bus())
//   foreachBatch the pickled Python function runs in a Python worker per query (foreach_batch.h),
//              killed when the query stops or ends
// Anything else in a streaming plan (another relation over a stream, foreach, continuous
// triggers, clusterBy, explain, the server-side listeners of older clients) is refused with
// NotSupported naming it.
//
// Queries are kept by run id for the session's life (a restart on the same checkpoint is a new
// run of the same query id: the client's older StreamingQuery still reads its own run); they stop
// when the session is released or the server ends (the C++ API stops a query when its last
// reference goes away).
//
// Thread safety: Start runs under the ConnectSession's mutex (it translates the plan with the
// session's views and engine). Command and Manager need no session lock and must be called
// without it: awaitTermination and processAllAvailable block while a foreachBatch worker sends
// requests of the same session. The object's own state is guarded by its own mutex, never held
// while waiting. A running query works on its own thread.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/result.h"
#include "connect/foreach_batch.h"
#include "connect/plan_translator.h"
#include "connect/query_listener_bus.h"

namespace sluice {
class Session;
class StreamingQuery;
class DataFrame;
}  // namespace sluice

namespace spark::connect {
class Relation;
class Join;
class WriteStreamOperationStart;
class WriteStreamOperationStartResult;
class StreamingQueryCommand;
class StreamingQueryCommandResult;
class StreamingQueryManagerCommand;
class StreamingQueryManagerCommandResult;
}  // namespace spark::connect

namespace sluice::connect {

class SessionStreams {
 public:
  // `session_id` and `cache` are the Connect session's (foreachBatch workers join the session
  // and read the micro-batch as a cached relation).
  SessionStreams(std::string warehouse, std::string session_id, PythonWorkerConfig workers,
                 std::shared_ptr<CachedRelations> cache);
  ~SessionStreams();
  SessionStreams(const SessionStreams&) = delete;
  SessionStreams& operator=(const SessionStreams&) = delete;

  // Starts the query; `translator` turns the plan's expressions into Spark SQL.
  Status Start(const spark::connect::WriteStreamOperationStart& start, PlanTranslator& translator,
               spark::connect::WriteStreamOperationStartResult* result);
  // One StreamingQuery method. awaitTermination blocks until the query ends (or the timeout);
  // a failed query's error is returned, as Spark raises it, and *query_failed is set (Spark's
  // StreamingQueryException) when the error is the query's rather than the command's.
  Status Command(const spark::connect::StreamingQueryCommand& command,
                 spark::connect::StreamingQueryCommandResult* result, bool* query_failed = nullptr);

  // One spark.streams method. awaitAnyTermination blocks until a query of the session ended
  // since the last resetTerminated (or the timeout); a failed query's error is returned (and
  // *query_failed set).
  Status Manager(const spark::connect::StreamingQueryManagerCommand& command,
                 spark::connect::StreamingQueryManagerCommandResult* result,
                 bool* query_failed = nullptr);

  // The session's listener bus (spark.streams.addListener: query_listener_bus.h), listening to
  // every query of the session.
  Result<QueryListenerBus*> Bus();

  // True when the plan reads a stream (AnalyzePlan is_streaming).
  static bool IsStreaming(const spark::connect::Relation& relation);

 private:
  Result<sluice::DataFrame> Frame(const spark::connect::Relation& relation,
                                  PlanTranslator& translator) SLUICE_REQUIRES(mu_);
  Result<sluice::DataFrame> JoinFrame(const spark::connect::Join& join, PlanTranslator& translator)
      SLUICE_REQUIRES(mu_);

  Status OpenApi() SLUICE_REQUIRES(mu_);
  // The run `run_id` of the query `id` (empty: its latest run), or null.
  std::shared_ptr<sluice::StreamingQuery> Find(const std::string& id,
                                               const std::string& run_id = "");
  std::vector<std::shared_ptr<sluice::StreamingQuery>> All();
  // Kills the foreachBatch worker of the run `run_id` (none: nothing).
  void CloseWorker(const std::string& run_id);

  struct Workers;  // the foreachBatch runners by run id, shared with the session's listener
  class EndListener;

  const std::string warehouse_;
  const std::string session_id_;
  const PythonWorkerConfig worker_config_;
  const std::shared_ptr<CachedRelations> cache_;
  const std::shared_ptr<Workers> workers_;
  const std::shared_ptr<QueryListenerBus> bus_ = std::make_shared<QueryListenerBus>();
  Mutex mu_;
  std::unique_ptr<sluice::Session> api_ SLUICE_GUARDED_BY(mu_);  // opened by the first Start
  std::map<std::string, std::shared_ptr<sluice::StreamingQuery>> queries_
      SLUICE_GUARDED_BY(mu_);                                             // every run, by run id
  std::map<std::string, std::string> latest_run_ SLUICE_GUARDED_BY(mu_);  // query id -> run id
  std::set<std::string> reset_ SLUICE_GUARDED_BY(mu_);  // ended runs resetTerminated forgot
};

}  // namespace sluice::connect
