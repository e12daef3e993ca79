#include "connect/connect_service.h"

#include <cctype>
#include <map>
#include <string_view>

#include "common/uuid.h"
#include "connect/batch_to_arrow.h"
#include "connect/batch_write.h"
#include "connect/plan_translator.h"
#include "connect/pyspark_names.h"
#include "connect/rpc_errors.h"
#include "connect/spark_types.h"
#include "connect/stream_commands.h"
#include "engine/column_values.h"
#include "sinks/console_sink.h"

namespace sluice::connect {

namespace sc = spark::connect;

namespace {

// The version of Spark's protocol this server speaks (the pinned pyspark-client's).
constexpr const char* kSparkVersion = "4.2.0";

std::string StripTrailingSemicolons(std::string text) {
  while (!text.empty() &&
         (std::isspace(static_cast<unsigned char>(text.back())) || text.back() == ';')) {
    text.pop_back();
  }
  return text;
}

std::string Quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\\' || c == '\'') out.push_back('\\');
    out.push_back(c);
  }
  return out + "'";
}

// A command's result as a relation: a query of its rows as literals, or an empty local
// relation when it has no columns (as Spark answers DDL).
Result<sc::Relation> ResultRelation(const engine::Batch& batch) {
  sc::Relation rel;
  if (batch.num_columns() == 0) {
    rel.mutable_local_relation();
    return rel;
  }
  std::vector<std::string> types;
  for (const engine::Field& f : batch.schema()) {
    SLUICE_ASSIGN_OR_RETURN(std::string t, SparkTypeName(f.type, f.name));
    types.push_back(std::move(t));
  }
  // A BLOB's bytes as they are (its text escapes bytes): read typed.
  std::map<size_t, engine::ColumnValues> blobs;
  for (size_t c = 0; c < batch.num_columns(); ++c) {
    if (batch.schema()[c].type.id != engine::TypeId::kBlob) continue;
    SLUICE_ASSIGN_OR_RETURN(blobs[c], engine::ReadColumnValues(batch, c, 0, batch.num_rows()));
  }
  auto row_sql = [&](int64_t r) -> Result<std::string> {
    std::string sql = "SELECT ";
    for (size_t c = 0; c < batch.num_columns(); ++c) {
      if (c) sql += ", ";
      std::string value = "NULL";
      if (r >= 0 && !batch.IsNull(r, c)) {
        if (batch.schema()[c].type.id == engine::TypeId::kBlob) {
          const std::string& bytes = blobs[c].bytes[static_cast<size_t>(r)];
          static const char* kHex = "0123456789ABCDEF";
          value = "X'";
          for (unsigned char b : bytes) {
            value.push_back(kHex[b >> 4]);
            value.push_back(kHex[b & 15]);
          }
          value += "'";
        } else {
          value = Quoted(*batch.GetString(r, c));  // the engine's text, cast back: exact
        }
      }
      sql += "CAST(" + value + " AS " + types[c] + ") AS " + QuoteName(batch.schema()[c].name);
    }
    return sql;
  };
  std::string query;
  if (batch.num_rows() == 0) {
    SLUICE_ASSIGN_OR_RETURN(query, row_sql(-1));
    query += " WHERE FALSE";
  }
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    SLUICE_ASSIGN_OR_RETURN(std::string one, row_sql(r));
    query += (r ? " UNION ALL " : "") + one;
  }
  rel.mutable_sql()->set_query(query);
  return rel;
}

// A translator over the session's temporary views and engine.
PlanTranslator TranslatorFor(ConnectSession& session) {
  TranslationContext ctx;
  ctx.temp_views = &session.temp_views;
  std::shared_ptr<CachedRelations> cached = session.cached;
  ctx.cached_relation = [cached](const std::string& id) { return cached->Get(id); };
  sql::Session* engine = session.sql.get();
  ctx.schema_of = [engine](const std::string& sql) -> Result<engine::Schema> {
    SLUICE_ASSIGN_OR_RETURN(engine::Batch b,
                            engine->Execute("SELECT * FROM (" + sql + ") AS _schema LIMIT 0"));
    return b.schema();
  };
  return PlanTranslator(std::move(ctx));
}

// df.show(): the input's first rows as Spark's table text, one row of one column show_string.
// Cells are CAST(x AS STRING) in the Spark dialect (Spark's text of each value).
Result<engine::Batch> RunShowString(ConnectSession& session, const sc::ShowString& show) {
  if (show.vertical())
    return Status::NotSupported(
        "Spark Connect: show(vertical=True) is not "
        "supported by Sluice yet");
  if (show.truncate() != 0 && show.truncate() != 20) {
    return Status::NotSupported("Spark Connect: show(truncate=" + std::to_string(show.truncate()) +
                                ") is not supported by Sluice yet (True/20 and False are)");
  }
  PlanTranslator translator = TranslatorFor(session);
  SLUICE_ASSIGN_OR_RETURN(std::string sql, translator.Query(show.input()));
  SLUICE_ASSIGN_OR_RETURN(engine::Batch empty,
                          session.sql->Execute("SELECT * FROM (" + sql + ") AS _show LIMIT 0"));
  std::string cells;
  for (const engine::Field& f : empty.schema()) {
    if (!cells.empty()) cells += ", ";
    cells += "CAST(" + QuoteName(f.name) + " AS STRING) AS " + QuoteName(f.name);
  }
  if (cells.empty()) cells = "*";
  SLUICE_ASSIGN_OR_RETURN(
      engine::Batch rows,
      session.sql->Execute("SELECT " + cells + " FROM (" + sql + ") AS _show LIMIT " +
                           std::to_string(static_cast<int64_t>(show.num_rows()) + 1)));
  std::string text = sinks::ShowString(rows, show.num_rows(), show.truncate() > 0);
  return session.sql->Execute("SELECT " + Quoted(text) + " AS show_string");
}

// The rows of a root relation.
Result<engine::Batch> RunRelation(ConnectSession& session, const sc::Relation& rel,
                                  std::string* sql_out = nullptr) {
  if (rel.has_show_string()) return RunShowString(session, rel.show_string());
  if (rel.has_local_relation()) {
    const sc::LocalRelation& local = rel.local_relation();
    if (!local.has_data() && (!local.has_schema() || local.schema().empty())) {
      return engine::Batch();  // no columns, no rows (the result of a DDL statement)
    }
  }
  PlanTranslator translator = TranslatorFor(session);
  SLUICE_ASSIGN_OR_RETURN(std::string sql, translator.Query(rel));
  if (sql_out) *sql_out = sql;
  return session.sql->Execute(sql);
}

Result<engine::Schema> RelationSchema(ConnectSession& session, const sc::Relation& rel) {
  if (rel.has_local_relation() && !rel.local_relation().has_data() &&
      (!rel.local_relation().has_schema() || rel.local_relation().schema().empty())) {
    return engine::Schema();
  }
  PlanTranslator translator = TranslatorFor(session);
  SLUICE_ASSIGN_OR_RETURN(std::string sql, translator.Query(rel));
  SLUICE_ASSIGN_OR_RETURN(engine::Batch b,
                          session.sql->Execute("SELECT * FROM (" + sql + ") AS _schema LIMIT 0"));
  return b.schema();
}

template <typename Response>
void Stamp(const ConnectSession& session, Response* r) {
  r->set_session_id(session.session_id);
  r->set_server_side_session_id(session.server_side_session_id);
}

Result<sc::ExecutePlanResponse> SqlCommandResponse(ConnectSession& session,
                                                   const sc::SqlCommand& cmd) {
  std::string text;
  if (cmd.has_input()) {
    if (!cmd.input().has_sql()) {
      return Status::NotSupported("Spark Connect: a sql_command whose input is not a sql relation");
    }
    const sc::SQL& q = cmd.input().sql();
    if (q.named_arguments_size() || q.pos_arguments_size()) {
      return Status::NotSupported(
          "Spark Connect: spark.sql() with query parameters (args) is "
          "not supported by Sluice yet");
    }
    text = q.query();
  } else {
    // SqlCommand.sql is the deprecated spelling of input.sql.query (older clients).
    text = cmd.GetReflection()->GetString(cmd, cmd.GetDescriptor()->FindFieldByName("sql"));
  }
  text = StripTrailingSemicolons(text);
  PlanTranslator translator = TranslatorFor(session);
  SLUICE_ASSIGN_OR_RETURN(std::string expanded, translator.WithTempViews(text));
  sc::ExecutePlanResponse response;
  sc::Relation* out = response.mutable_sql_command_result()->mutable_relation();
  if (IsQueryText(text)) {
    // Spark analyzes the query at spark.sql() time: errors come now, the rows when collected.
    SLUICE_RETURN_NOT_OK(
        session.sql->Execute("SELECT * FROM (" + expanded + ") AS _check LIMIT 0").status());
    out->mutable_sql()->set_query(text);
    return response;
  }
  // Delta's idempotent DML: the session's txnAppId/txnVersion confs apply to this statement.
  Result<std::optional<delta::SetTransaction>> txn = session.IdempotentTxn();
  if (!txn.ok() && IsDmlText(text)) return txn.status();
  session.sql->SetIdempotentTxn(txn.ok() ? *txn : std::nullopt);
  Result<engine::Batch> batch = session.sql->Execute(expanded);
  session.sql->SetIdempotentTxn(std::nullopt);
  SLUICE_RETURN_NOT_OK(batch.status());
  SLUICE_ASSIGN_OR_RETURN(*out, ResultRelation(*batch));
  return response;
}

// createOrReplaceTempView / createTempView: the input's query, checked now (as Spark analyzes
// it), kept under the view's name for the session's later plans and SQL.
Status CreateTempView(ConnectSession& session, const sc::CreateDataFrameViewCommand& cmd) {
  if (cmd.is_global()) {
    return Status::NotSupported(
        "Spark Connect: global temporary views (createGlobalTempView) are "
        "not supported by Sluice yet");
  }
  if (cmd.name().empty() || cmd.name().find('.') != std::string::npos) {
    return Status::InvalidArgument("Spark Connect: '" + cmd.name() +
                                   "' is not a name for a temporary view (one part, not empty)");
  }
  std::string key;
  for (char c : cmd.name())
    key.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (!cmd.replace() && session.temp_views.count(key)) {
    // An AnalysisException, as Spark's TEMP_TABLE_OR_VIEW_ALREADY_EXISTS (rpc_errors.h).
    return Status::AlreadyExists(
        "[TEMP_TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create the temporary view `" + cmd.name() +
        "` because it already exists.");
  }
  PlanTranslator translator = TranslatorFor(session);
  SLUICE_ASSIGN_OR_RETURN(std::string sql, translator.Query(cmd.input()));
  SLUICE_RETURN_NOT_OK(
      session.sql->Execute("SELECT * FROM (" + sql + ") AS _view LIMIT 0").status());
  session.temp_views[key] = TempView{cmd.name(), sql};
  return Status::OK();
}

std::string TreeString(const engine::Schema& schema, Status* status) {
  std::string out = "root\n";
  for (const engine::Field& f : schema) {
    Result<std::string> name = SparkTypeDisplayName(f.type, f.name);
    if (!name.ok()) {
      *status = name.status();
      return "";
    }
    out +=
        " |-- " + f.name + ": " + *name + " (nullable = " + (f.nullable ? "true" : "false") + ")\n";
  }
  return out;
}

}  // namespace

ConnectService::ConnectService(std::string warehouse) : sessions_(std::move(warehouse)) {}

void ConnectService::SetWorkerConfig(PythonWorkerConfig config) {
  MutexLock lock(&config_mu_);
  worker_config_ = std::move(config);
}

PythonWorkerConfig ConnectService::WorkerConfig() {
  MutexLock lock(&config_mu_);
  return worker_config_;
}

grpc::Status ConnectService::ExecutePlan(grpc::ServerContext* context,
                                         const sc::ExecutePlanRequest* req,
                                         grpc::ServerWriter<sc::ExecutePlanResponse>* writer) {
  Result<std::shared_ptr<ConnectSession>> got = sessions_.GetOrCreate(req->session_id());
  if (!got.ok()) return ToGrpcStatus(got.status());
  ConnectSession& session = **got;
  std::unique_lock<std::mutex> lock(session.mu);
  const std::string operation_id = req->has_operation_id() ? req->operation_id() : NewUuidV4();
  auto send = [&](sc::ExecutePlanResponse r) {
    Stamp(session, &r);
    r.set_operation_id(operation_id);
    r.set_response_id(NewUuidV4());
    return writer->Write(r);
  };
  auto complete = [&]() {
    sc::ExecutePlanResponse done;
    done.mutable_result_complete();
    send(std::move(done));
    return grpc::Status::OK;
  };
  const sc::Plan& plan = req->plan();
  if (plan.has_command()) {
    const sc::Command& cmd = plan.command();
    if (cmd.has_streaming_query_listener_bus_command()) {
      if (!session.streams) {
        session.streams = std::make_unique<SessionStreams>(
            session.sql->warehouse(), session.session_id, WorkerConfig(), session.cached);
      }
      SessionStreams* streams = session.streams.get();
      lock.unlock();  // the stream stays open while the session's other requests run
      Result<QueryListenerBus*> bus = streams->Bus();
      if (!bus.ok()) return ToGrpcStatus(bus.status());
      if (!cmd.streaming_query_listener_bus_command().add_listener_bus_listener()) {
        (*bus)->Close();  // remove_listener_bus_listener: the open stream ends
        return complete();
      }
      const uint64_t generation = (*bus)->Open();
      sc::ExecutePlanResponse added;
      added.mutable_streaming_query_listener_events_result()->set_listener_bus_listener_added(true);
      if (!send(std::move(added))) return grpc::Status(grpc::StatusCode::CANCELLED, "client gone");
      while (!context->IsCancelled()) {
        std::optional<std::vector<QueryListenerBus::Event>> events =
            (*bus)->Next(generation, std::chrono::milliseconds(500));
        if (!events) break;  // removed, replaced by another add, or the session ended
        if (events->empty()) continue;
        sc::ExecutePlanResponse r;
        for (QueryListenerBus::Event& e : *events) {
          sc::StreamingQueryListenerEvent* out =
              r.mutable_streaming_query_listener_events_result()->add_events();
          out->set_event_json(std::move(e.json));
          out->set_event_type(static_cast<sc::StreamingQueryEventType>(e.type));
        }
        if (!send(std::move(r))) return grpc::Status(grpc::StatusCode::CANCELLED, "client gone");
      }
      return complete();
    }
    if (cmd.has_write_stream_operation_start() || cmd.has_streaming_query_command() ||
        cmd.has_streaming_query_manager_command()) {
      if (!session.streams) {
        session.streams = std::make_unique<SessionStreams>(
            session.sql->warehouse(), session.session_id, WorkerConfig(), session.cached);
      }
      SessionStreams* streams = session.streams.get();  // lives as long as the session
      sc::ExecutePlanResponse r;
      Status st;
      bool query_failed = false;
      if (cmd.has_write_stream_operation_start()) {
        PlanTranslator translator = TranslatorFor(session);
        st = streams->Start(cmd.write_stream_operation_start(), translator,
                            r.mutable_write_stream_operation_start_result());
      } else {
        // Without the session's lock: these may wait while a foreachBatch worker of this
        // session sends its requests.
        lock.unlock();
        if (cmd.has_streaming_query_command()) {
          st = streams->Command(cmd.streaming_query_command(),
                                r.mutable_streaming_query_command_result(), &query_failed);
        } else {
          st = streams->Manager(cmd.streaming_query_manager_command(),
                                r.mutable_streaming_query_manager_command_result(), &query_failed);
        }
      }
      if (query_failed) {
        // Spark's StreamingQueryException: what PySpark raises from awaitTermination.
        SparkError e;
        e.code = grpc::StatusCode::INTERNAL;
        e.exception_class = "org.apache.spark.sql.streaming.StreamingQueryException";
        e.error_class = "STREAM_FAILED";
        e.message = st.message();
        return ToGrpcStatus(e);
      }
      if (!st.ok()) return ToGrpcStatus(st);
      send(std::move(r));
      return complete();
    }
    if (cmd.has_write_operation()) {
      if (!session.write_engine) {
        Result<std::unique_ptr<engine::Engine>> engine = engine::Engine::Open();
        if (!engine.ok()) return ToGrpcStatus(engine.status());
        session.write_engine = std::move(*engine);
      }
      PlanTranslator translator = TranslatorFor(session);
      Result<std::optional<delta::SetTransaction>> conf_txn = session.IdempotentTxn();
      if (!conf_txn.ok()) return ToGrpcStatus(conf_txn.status());
      Status st = RunWriteOperation(cmd.write_operation(), translator, *session.sql,
                                    *session.write_engine, *conf_txn);
      if (!st.ok()) return ToGrpcStatus(st);
      return complete();
    }
    if (cmd.has_remove_cached_remote_relation_command()) {
      // A foreachBatch DataFrame the worker let go; the runner drops it after the call anyway.
      session.cached->Remove(cmd.remove_cached_remote_relation_command().relation().relation_id());
      return complete();
    }
    if (cmd.has_create_dataframe_view()) {
      Status st = CreateTempView(session, cmd.create_dataframe_view());
      if (!st.ok()) return ToGrpcStatus(st);
      return complete();
    }
    if (!cmd.has_sql_command()) {
      const auto* field = cmd.GetDescriptor()->FindFieldByNumber(cmd.command_type_case());
      return ToGrpcStatus(
          Status::NotSupported("Spark Connect: the command " +
                               (field ? CommandWithApi(field->name()) : std::string("(none)")) +
                               " is not supported by Sluice yet"));
    }
    Result<sc::ExecutePlanResponse> r = SqlCommandResponse(session, cmd.sql_command());
    if (!r.ok()) return ToGrpcStatus(r.status());
    send(std::move(*r));
    return complete();
  }
  if (!plan.has_root()) {
    return ToGrpcStatus(
        Status::InvalidArgument("Spark Connect: a plan with neither a root "
                                "relation nor a command"));
  }
  Result<engine::Batch> rows = RunRelation(session, plan.root());
  if (!rows.ok()) return ToGrpcStatus(rows.status());
  sc::ExecutePlanResponse schema;
  Status st = SchemaToProto(rows->schema(), schema.mutable_schema());
  if (!st.ok()) return ToGrpcStatus(st);
  send(std::move(schema));
  int64_t offset = 0;
  do {
    int64_t n = 0;
    Result<std::string> data = BatchToArrowStream(*rows, offset, kRowsPerArrowBatch, &n);
    if (!data.ok()) return ToGrpcStatus(data.status());
    sc::ExecutePlanResponse batch;
    batch.mutable_arrow_batch()->set_row_count(n);
    batch.mutable_arrow_batch()->set_start_offset(offset);
    batch.mutable_arrow_batch()->set_data(std::move(*data));
    if (!send(std::move(batch))) return grpc::Status(grpc::StatusCode::CANCELLED, "client gone");
    offset += n;
  } while (offset < rows->num_rows());
  return complete();
}

grpc::Status ConnectService::AnalyzePlan(grpc::ServerContext*, const sc::AnalyzePlanRequest* req,
                                         sc::AnalyzePlanResponse* resp) {
  Result<std::shared_ptr<ConnectSession>> got = sessions_.GetOrCreate(req->session_id());
  if (!got.ok()) return ToGrpcStatus(got.status());
  ConnectSession& session = **got;
  std::lock_guard<std::mutex> lock(session.mu);
  Stamp(session, resp);
  auto root = [](const sc::Plan& plan) -> Result<const sc::Relation*> {
    if (!plan.has_root()) {
      return Status::NotSupported(
          "Spark Connect: analyzing a command plan is not supported "
          "by Sluice yet");
    }
    return &plan.root();
  };
  using K = sc::AnalyzePlanRequest::AnalyzeCase;
  switch (req->analyze_case()) {
    case K::kSparkVersion:
      resp->mutable_spark_version()->set_version(kSparkVersion);
      return grpc::Status::OK;
    case K::kSchema:
    case K::kTreeString: {
      const sc::Plan& plan = req->has_schema() ? req->schema().plan() : req->tree_string().plan();
      Result<const sc::Relation*> rel = root(plan);
      if (!rel.ok()) return ToGrpcStatus(rel.status());
      Result<engine::Schema> schema = RelationSchema(session, **rel);
      if (!schema.ok()) return ToGrpcStatus(schema.status());
      Status st;
      if (req->has_schema()) {
        st = SchemaToProto(*schema, resp->mutable_schema()->mutable_schema());
      } else {
        resp->mutable_tree_string()->set_tree_string(TreeString(*schema, &st));
      }
      return st.ok() ? grpc::Status::OK : ToGrpcStatus(st);
    }
    case K::kIsLocal:
      resp->mutable_is_local()->set_is_local(false);
      return grpc::Status::OK;
    case K::kIsStreaming: {
      Result<const sc::Relation*> rel = root(req->is_streaming().plan());
      if (!rel.ok()) return ToGrpcStatus(rel.status());
      if (SessionStreams::IsStreaming(**rel)) {
        resp->mutable_is_streaming()->set_is_streaming(true);
        return grpc::Status::OK;
      }
      // Streaming reads are refused by the translator, so a translated plan is a batch plan.
      PlanTranslator translator = TranslatorFor(session);
      Result<std::string> sql = translator.Query(**rel);
      if (!sql.ok()) return ToGrpcStatus(sql.status());
      resp->mutable_is_streaming()->set_is_streaming(false);
      return grpc::Status::OK;
    }
    case K::kExplain: {
      Result<const sc::Relation*> rel = root(req->explain().plan());
      if (!rel.ok()) return ToGrpcStatus(rel.status());
      PlanTranslator translator = TranslatorFor(session);
      Result<std::string> sql = translator.Query(**rel);
      if (!sql.ok()) return ToGrpcStatus(sql.status());
      resp->mutable_explain()->set_explain_string("== Sluice SQL ==\n" + *sql + "\n");
      return grpc::Status::OK;
    }
    default: {
      const auto* field = req->GetDescriptor()->FindFieldByNumber(req->analyze_case());
      return ToGrpcStatus(Status::NotSupported("Spark Connect: AnalyzePlan " +
                                               (field ? field->name() : std::string("(none)")) +
                                               " is not supported by Sluice yet"));
    }
  }
}

grpc::Status ConnectService::Config(grpc::ServerContext*, const sc::ConfigRequest* req,
                                    sc::ConfigResponse* resp) {
  Result<std::shared_ptr<ConnectSession>> got = sessions_.GetOrCreate(req->session_id());
  if (!got.ok()) return ToGrpcStatus(got.status());
  ConnectSession& session = **got;
  std::lock_guard<std::mutex> lock(session.mu);
  Stamp(session, resp);
  const sc::ConfigRequest::Operation& op = req->operation();
  auto pair = [resp](const std::string& key, const std::optional<std::string>& value) {
    sc::KeyValue* kv = resp->add_pairs();
    kv->set_key(key);
    if (value) kv->set_value(*value);
  };
  auto not_found = [](const std::string& key) {
    SparkError e;
    e.code = grpc::StatusCode::INVALID_ARGUMENT;
    e.exception_class = "org.apache.spark.SparkNoSuchElementException";
    e.error_class = "SQL_CONF_NOT_FOUND";
    e.sql_state = "42K0I";
    e.message = "The SQL config \"" + key +
                "\" cannot be found. Please verify that the config "
                "exists.";
    return ToGrpcStatus(e);
  };
  using K = sc::ConfigRequest::Operation::OpTypeCase;
  switch (op.op_type_case()) {
    case K::kSet:
      for (const sc::KeyValue& kv : op.set().pairs()) {
        Status st = session.SetConf(kv.key(), kv.value());
        if (!st.ok()) return ToGrpcStatus(st);
      }
      return grpc::Status::OK;
    case K::kGet:
      for (const std::string& key : op.get().keys()) {
        std::optional<std::string> v = session.GetConf(key);
        if (!v) return not_found(key);
        pair(key, v);
      }
      return grpc::Status::OK;
    case K::kGetWithDefault:
      for (const sc::KeyValue& kv : op.get_with_default().pairs()) {
        std::optional<std::string> v = session.GetConf(kv.key());
        if (!v && kv.has_value()) v = kv.value();
        pair(kv.key(), v);
      }
      return grpc::Status::OK;
    case K::kGetOption:
      for (const std::string& key : op.get_option().keys()) pair(key, session.GetConf(key));
      return grpc::Status::OK;
    case K::kGetAll: {
      std::string prefix = op.get_all().has_prefix() ? op.get_all().prefix() : "";
      for (const auto& [key, value] : session.confs) {
        if (key.rfind(prefix, 0) == 0) pair(key, value);
      }
      return grpc::Status::OK;
    }
    case K::kUnset:
      for (const std::string& key : op.unset().keys()) session.confs.erase(key);
      return grpc::Status::OK;
    case K::kIsModifiable:
      for (const std::string& key : op.is_modifiable().keys()) pair(key, "true");
      return grpc::Status::OK;
    default:
      return ToGrpcStatus(
          Status::InvalidArgument("Spark Connect: a Config request without an "
                                  "operation"));
  }
}

grpc::Status ConnectService::Interrupt(grpc::ServerContext*, const sc::InterruptRequest* req,
                                       sc::InterruptResponse* resp) {
  Result<std::shared_ptr<ConnectSession>> got = sessions_.GetOrCreate(req->session_id());
  if (!got.ok()) return ToGrpcStatus(got.status());
  Stamp(**got, resp);
  return grpc::Status::OK;
}

grpc::Status ConnectService::ReattachExecute(grpc::ServerContext*,
                                             const sc::ReattachExecuteRequest* req,
                                             grpc::ServerWriter<sc::ExecutePlanResponse>*) {
  SparkError e;
  e.code = grpc::StatusCode::INVALID_ARGUMENT;
  e.exception_class = "org.apache.spark.SparkSQLException";
  e.error_class = "INVALID_HANDLE.OPERATION_NOT_FOUND";
  e.sql_state = "HY000";
  e.message = "The handle " + req->operation_id() +
              " is invalid. The operation was not found (Sluice completes every operation in "
              "its first stream).";
  return ToGrpcStatus(e);
}

grpc::Status ConnectService::ReleaseExecute(grpc::ServerContext*,
                                            const sc::ReleaseExecuteRequest* req,
                                            sc::ReleaseExecuteResponse* resp) {
  Result<std::shared_ptr<ConnectSession>> got = sessions_.GetOrCreate(req->session_id());
  if (!got.ok()) return ToGrpcStatus(got.status());
  Stamp(**got, resp);
  resp->set_operation_id(req->operation_id());
  return grpc::Status::OK;
}

grpc::Status ConnectService::ReleaseSession(grpc::ServerContext*,
                                            const sc::ReleaseSessionRequest* req,
                                            sc::ReleaseSessionResponse* resp) {
  resp->set_session_id(req->session_id());
  sessions_.Release(req->session_id());
  return grpc::Status::OK;
}

}  // namespace sluice::connect
