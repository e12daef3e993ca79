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
//   manager    spark.streams: active, get, awaitAnyTermination([timeout]), resetTerminated
// Anything else in a streaming plan (another relation over a stream, foreachBatch, foreach,
// continuous triggers, clusterBy, explain, listeners) is refused with NotSupported naming it.
//
// Queries are kept by id for the session's life; they stop when the session is released or the
// server ends (the C++ API stops a query when its last reference goes away).
//
// Thread safety: used under the ConnectSession's mutex (one request of a session at a time). A
// running query works on its own thread.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "common/result.h"
#include "connect/plan_translator.h"

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
  explicit SessionStreams(std::string warehouse);
  ~SessionStreams();
  SessionStreams(const SessionStreams&) = delete;
  SessionStreams& operator=(const SessionStreams&) = delete;

  // Starts the query; `translator` turns the plan's expressions into Spark SQL.
  Status Start(const spark::connect::WriteStreamOperationStart& start, PlanTranslator& translator,
               spark::connect::WriteStreamOperationStartResult* result);
  // One StreamingQuery method. awaitTermination blocks until the query ends (or the timeout);
  // a failed query's error is returned, as Spark raises it.
  Status Command(const spark::connect::StreamingQueryCommand& command,
                 spark::connect::StreamingQueryCommandResult* result);

  // One spark.streams method. awaitAnyTermination blocks until a query of the session ended
  // since the last resetTerminated (or the timeout); a failed query's error is returned.
  Status Manager(const spark::connect::StreamingQueryManagerCommand& command,
                 spark::connect::StreamingQueryManagerCommandResult* result);

  // True when the plan reads a stream (AnalyzePlan is_streaming).
  static bool IsStreaming(const spark::connect::Relation& relation);

 private:
  Result<sluice::DataFrame> Frame(const spark::connect::Relation& relation,
                                  PlanTranslator& translator);
  Result<sluice::DataFrame> JoinFrame(const spark::connect::Join& join, PlanTranslator& translator);

  std::string warehouse_;
  std::unique_ptr<sluice::Session> api_;  // opened by the first Start
  std::map<std::string, std::shared_ptr<sluice::StreamingQuery>> queries_;  // by query id
  std::set<std::string> reset_;  // ended queries resetTerminated forgot (by run id)
};

}  // namespace sluice::connect
