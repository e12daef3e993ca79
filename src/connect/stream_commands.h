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
//   query      status, isActive, lastProgress, recentProgress (Sluice's progress JSON, Spark's
//              StreamingQueryProgress), awaitTermination([timeout]), processAllAvailable, stop,
//              exception
// Anything else in a streaming plan (another relation over a stream, foreachBatch, foreach,
// continuous triggers, clusterBy, explain) is refused with NotSupported naming it.
//
// Queries are kept by id for the session's life; they stop when the session is released or the
// server ends (the C++ API stops a query when its last reference goes away).
//
// Thread safety: used under the ConnectSession's mutex (one request of a session at a time). A
// running query works on its own thread.
#pragma once

#include <map>
#include <memory>
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
class WriteStreamOperationStart;
class WriteStreamOperationStartResult;
class StreamingQueryCommand;
class StreamingQueryCommandResult;
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

  // True when the plan reads a stream (AnalyzePlan is_streaming).
  static bool IsStreaming(const spark::connect::Relation& relation);

 private:
  Result<sluice::DataFrame> Frame(const spark::connect::Relation& relation,
                                  PlanTranslator& translator);

  std::string warehouse_;
  std::unique_ptr<sluice::Session> api_;  // opened by the first Start
  std::map<std::string, std::shared_ptr<sluice::StreamingQuery>> queries_;  // by query id
};

}  // namespace sluice::connect
