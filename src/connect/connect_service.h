// ConnectService: the spark.connect.SparkConnectService gRPC service over a SessionRegistry.
//
// What each RPC does (docs/pyspark.md, "Design"):
//   ExecutePlan      a root relation: translated to one Spark SQL query (PlanTranslator), run
//                    by the session's sql::Session, answered with the result's schema, its rows
//                    as Arrow IPC streams of at most kRowsPerArrowBatch rows (always at least
//                    one, so an empty result still carries its Arrow schema), and ResultComplete.
//                    A sql_command: a query is checked (run with LIMIT 0) and answered as a Sql
//                    relation for the client to run, as Spark does; any other statement runs at
//                    once and its result comes back as a query of literal rows.
//   AnalyzePlan      schema, tree_string (printSchema), is_local, is_streaming, explain (the
//                    SQL Sluice runs), spark_version ("4.2.0", the protocol version served).
//   Config           set, get, get_with_default, get_option, get_all, unset, is_modifiable.
//   ReleaseExecute   acknowledged: every operation is complete when its stream ends, so there
//                    is nothing kept to release. ReattachExecute is answered
//                    INVALID_HANDLE.OPERATION_NOT_FOUND for the same reason.
//   Commands         sql_command, create_dataframe_view, write_operation (batch_write.h),
//                    write_stream_operation_start, streaming_query_command and
//                    streaming_query_manager_command (stream_commands.h; a failed query's error
//                    is Spark's StreamingQueryException), remove_cached_remote_relation_command.
//   ReleaseSession   drops the session. Interrupt: acknowledged, nothing interrupted (a request
//                    runs to its end). AddArtifacts, ArtifactStatus, CloneSession, GetStatus and
//                    FetchErrorDetails: UNIMPLEMENTED (no error carries an errorId to fetch).
// Errors carry Spark's exception classes and error classes (connect/rpc_errors.h).
//
// Thread safety: gRPC calls the service from its thread pool; requests of one session are
// serialized by the session's mutex, requests of different sessions run in parallel. The
// StreamingQuery and spark.streams commands do not take the session's mutex (they may block
// while a foreachBatch worker of the same session sends requests).
#pragma once

#include <memory>
#include <string>

#include "common/mutex.h"
#include "connect/foreach_batch.h"
#include "connect/session_registry.h"
#include "spark/connect/base.grpc.pb.h"

namespace sluice::connect {

inline constexpr int64_t kRowsPerArrowBatch = 8192;

class ConnectService final : public spark::connect::SparkConnectService::Service {
 public:
  explicit ConnectService(std::string warehouse);

  // Where foreachBatch workers connect back to and their Python (foreach_batch.h); set by the
  // server once it listens. Without a URL, foreachBatch is refused.
  void SetWorkerConfig(PythonWorkerConfig config);

  grpc::Status ExecutePlan(
      grpc::ServerContext* context, const spark::connect::ExecutePlanRequest* request,
      grpc::ServerWriter<spark::connect::ExecutePlanResponse>* writer) override;
  grpc::Status AnalyzePlan(grpc::ServerContext* context,
                           const spark::connect::AnalyzePlanRequest* request,
                           spark::connect::AnalyzePlanResponse* response) override;
  grpc::Status Config(grpc::ServerContext* context, const spark::connect::ConfigRequest* request,
                      spark::connect::ConfigResponse* response) override;
  grpc::Status Interrupt(grpc::ServerContext* context,
                         const spark::connect::InterruptRequest* request,
                         spark::connect::InterruptResponse* response) override;
  grpc::Status ReattachExecute(
      grpc::ServerContext* context, const spark::connect::ReattachExecuteRequest* request,
      grpc::ServerWriter<spark::connect::ExecutePlanResponse>* writer) override;
  grpc::Status ReleaseExecute(grpc::ServerContext* context,
                              const spark::connect::ReleaseExecuteRequest* request,
                              spark::connect::ReleaseExecuteResponse* response) override;
  grpc::Status ReleaseSession(grpc::ServerContext* context,
                              const spark::connect::ReleaseSessionRequest* request,
                              spark::connect::ReleaseSessionResponse* response) override;

  SessionRegistry& sessions() { return sessions_; }

 private:
  PythonWorkerConfig WorkerConfig();

  SessionRegistry sessions_;
  Mutex config_mu_;
  PythonWorkerConfig worker_config_ SLUICE_GUARDED_BY(config_mu_);
};

}  // namespace sluice::connect
