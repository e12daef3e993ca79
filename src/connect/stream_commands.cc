#include "connect/stream_commands.h"

#include <chrono>
#include <optional>
#include <thread>

#include "common/strings.h"
#include "connect/pyspark_names.h"
#include "dialect/spark_sql.h"
#include "sluice/session.h"
#include "sluice/streaming.h"
#include "spark/connect/commands.pb.h"
#include "spark/connect/relations.pb.h"

namespace sluice::connect {

namespace sc = spark::connect;

namespace {

Status NotYet(const std::string& what) {
  return Status::NotSupported("Spark Connect: " + what + " is not supported by Sluice yet");
}

std::string RelationName(const sc::Relation& rel) {
  const google::protobuf::FieldDescriptor* f =
      rel.GetDescriptor()->FindFieldByNumber(rel.rel_type_case());
  return f ? f->name() : "(none)";
}

// The API's spelling of a Connect join type.
Result<std::string> JoinHow(sc::Join::JoinType type) {
  switch (type) {
    case sc::Join::JOIN_TYPE_UNSPECIFIED:
    case sc::Join::JOIN_TYPE_INNER:
      return std::string("inner");
    case sc::Join::JOIN_TYPE_LEFT_OUTER:
      return std::string("left");
    case sc::Join::JOIN_TYPE_RIGHT_OUTER:
      return std::string("right");
    case sc::Join::JOIN_TYPE_FULL_OUTER:
      return std::string("full");
    case sc::Join::JOIN_TYPE_LEFT_SEMI:
      return std::string("semi");
    case sc::Join::JOIN_TYPE_LEFT_ANTI:
      return std::string("anti");
    case sc::Join::JOIN_TYPE_CROSS:
      return std::string("cross");
    default:
      return NotYet("a join of type " + std::to_string(static_cast<int>(type)) + " on a stream");
  }
}

Result<std::vector<std::string>> ColumnNames(const sluice::DataFrame& frame) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<sluice::Column> columns, frame.Schema());
  std::vector<std::string> out;
  out.reserve(columns.size());
  for (const sluice::Column& c : columns) out.push_back(c.name);
  return out;
}

std::optional<size_t> FindName(const std::vector<std::string>& names, const std::string& name) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (AsciiEqualsIgnoreCase(names[i], name)) return i;
  }
  return std::nullopt;
}

}  // namespace

struct SessionStreams::Workers {
  Mutex mu;
  std::map<std::string, std::shared_ptr<ForeachBatchRunner>> by_run SLUICE_GUARDED_BY(mu);

  void Close(const std::string& run_id) {
    std::shared_ptr<ForeachBatchRunner> runner;
    {
      MutexLock lock(&mu);
      auto it = by_run.find(run_id);
      if (it == by_run.end()) return;
      runner = it->second;
      by_run.erase(it);
    }
    runner->Close();
  }
  void CloseAll() {
    std::map<std::string, std::shared_ptr<ForeachBatchRunner>> all;
    {
      MutexLock lock(&mu);
      all.swap(by_run);
    }
    for (auto& [run, runner] : all) runner->Close();
  }
};

// Kills a query's foreachBatch worker when the query ends by itself (availableNow, a failure).
class SessionStreams::EndListener : public sluice::StreamingQueryListener {
 public:
  explicit EndListener(std::weak_ptr<Workers> workers) : workers_(std::move(workers)) {}
  void OnQueryTerminated(const sluice::QueryTerminatedEvent& event) override {
    if (std::shared_ptr<Workers> w = workers_.lock()) w->Close(event.run_id);
  }

 private:
  std::weak_ptr<Workers> workers_;
};

SessionStreams::SessionStreams(std::string warehouse, std::string session_id,
                               PythonWorkerConfig workers, std::shared_ptr<CachedRelations> cache)
    : warehouse_(std::move(warehouse)),
      session_id_(std::move(session_id)),
      worker_config_(std::move(workers)),
      cache_(std::move(cache)),
      workers_(std::make_shared<Workers>()) {}

SessionStreams::~SessionStreams() {
  bus_->Close();
  // The session (or the server) ends: the workers first (a batch waiting on its worker fails at
  // once instead of the worker's requests to a server that is going away), then every query,
  // before the API session that runs them closes.
  workers_->CloseAll();
  MutexLock lock(&mu_);
  for (auto& [id, query] : queries_) (void)query->Stop();
  queries_.clear();
}

std::shared_ptr<sluice::StreamingQuery> SessionStreams::Find(const std::string& id,
                                                             const std::string& run_id) {
  MutexLock lock(&mu_);
  std::string run = run_id;
  if (run.empty()) {
    auto latest = latest_run_.find(id);
    if (latest == latest_run_.end()) return nullptr;
    run = latest->second;
  }
  auto it = queries_.find(run);
  if (it == queries_.end() || it->second->Id() != id) return nullptr;
  return it->second;
}

std::vector<std::shared_ptr<sluice::StreamingQuery>> SessionStreams::All() {
  MutexLock lock(&mu_);
  std::vector<std::shared_ptr<sluice::StreamingQuery>> out;
  for (const auto& [id, q] : queries_) out.push_back(q);
  return out;
}

void SessionStreams::CloseWorker(const std::string& run_id) { workers_->Close(run_id); }

Status SessionStreams::OpenApi() {
  if (api_) return Status::OK();
  sluice::SessionOptions options;
  options.warehouse = warehouse_;
  SLUICE_ASSIGN_OR_RETURN(api_, sluice::Session::Open(options));
  api_->AddListener(std::make_shared<EndListener>(workers_));
  api_->AddListener(bus_);
  return Status::OK();
}

Result<QueryListenerBus*> SessionStreams::Bus() {
  MutexLock lock(&mu_);
  SLUICE_RETURN_NOT_OK(OpenApi());
  return bus_.get();
}

bool SessionStreams::IsStreaming(const sc::Relation& rel) {
  if (rel.has_read()) return rel.read().is_streaming();
  // Any relation field that is a relation: streaming when one of them is.
  const google::protobuf::Reflection* r = rel.GetReflection();
  const google::protobuf::FieldDescriptor* f =
      rel.GetDescriptor()->FindFieldByNumber(rel.rel_type_case());
  if (f == nullptr || f->type() != google::protobuf::FieldDescriptor::TYPE_MESSAGE) return false;
  const google::protobuf::Message& inner = r->GetMessage(rel, f);
  const google::protobuf::Descriptor* d = inner.GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = d->field(i);
    if (field->message_type() != sc::Relation::descriptor() || field->is_repeated()) continue;
    const google::protobuf::Reflection* ir = inner.GetReflection();
    if (!ir->HasField(inner, field)) continue;
    if (IsStreaming(static_cast<const sc::Relation&>(ir->GetMessage(inner, field)))) return true;
  }
  return false;
}

Result<sluice::DataFrame> SessionStreams::Frame(const sc::Relation& rel, PlanTranslator& t) {
  if (!IsStreaming(rel)) {
    // A batch side of a stream (a stream-static join): its query, read at every micro-batch.
    SLUICE_ASSIGN_OR_RETURN(std::string sql, t.Query(rel));
    return api_->Sql(sql);
  }
  if (rel.has_read()) {
    const sc::Read& read = rel.read();
    sluice::DataStreamReader reader = api_->ReadStream();
    if (read.has_named_table()) {
      std::map<std::string, std::string> options(read.named_table().options().begin(),
                                                 read.named_table().options().end());
      return reader.Options(options).Table(read.named_table().unparsed_identifier());
    }
    const sc::Read::DataSource& ds = read.data_source();
    if (!ds.has_format()) {
      return NotYet("readStream without format(...) (Spark's default source, parquet files)");
    }
    if (ds.has_schema() && !ds.schema().empty()) return NotYet("readStream.schema(...)");
    if (ds.paths_size() > 1) return NotYet("readStream.load() of several paths");
    reader.Format(ds.format());
    std::map<std::string, std::string> options(ds.options().begin(), ds.options().end());
    reader.Options(options);
    return reader.Load(ds.paths_size() ? ds.paths(0) : "");
  }
  auto exprs = [&](const auto& list) -> Result<std::vector<std::string>> {
    std::vector<std::string> out;
    for (const sc::Expression& e : list) {
      if (e.has_expression_string()) {
        out.push_back(e.expression_string().expression());
        continue;
      }
      SLUICE_ASSIGN_OR_RETURN(std::string s, t.Expr(e));
      out.push_back(std::move(s));
    }
    return out;
  };
  switch (rel.rel_type_case()) {
    case sc::Relation::kFilter: {
      SLUICE_ASSIGN_OR_RETURN(sluice::DataFrame in, Frame(rel.filter().input(), t));
      SLUICE_ASSIGN_OR_RETURN(std::string cond, t.Expr(rel.filter().condition()));
      return in.Where(cond);
    }
    case sc::Relation::kProject: {
      if (!rel.project().has_input()) return NotYet("a projection without input on a stream");
      SLUICE_ASSIGN_OR_RETURN(sluice::DataFrame in, Frame(rel.project().input(), t));
      SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> list, exprs(rel.project().expressions()));
      return in.SelectExpr(list);
    }
    case sc::Relation::kWithColumns: {
      SLUICE_ASSIGN_OR_RETURN(sluice::DataFrame in, Frame(rel.with_columns().input(), t));
      for (const sc::Expression::Alias& a : rel.with_columns().aliases()) {
        if (a.name_size() != 1) return NotYet("withColumns with a multi-column alias");
        SLUICE_ASSIGN_OR_RETURN(std::string e, t.Expr(a.expr()));
        in = in.WithColumn(a.name(0), e);
      }
      return in;
    }
    case sc::Relation::kWithWatermark: {
      const sc::WithWatermark& w = rel.with_watermark();
      SLUICE_ASSIGN_OR_RETURN(sluice::DataFrame in, Frame(w.input(), t));
      return in.WithWatermark(w.event_time(), w.delay_threshold());
    }
    case sc::Relation::kDeduplicate: {
      const sc::Deduplicate& d = rel.deduplicate();
      SLUICE_ASSIGN_OR_RETURN(sluice::DataFrame in, Frame(d.input(), t));
      std::vector<std::string> keys;  // empty: every column
      if (!d.all_columns_as_keys()) keys.assign(d.column_names().begin(), d.column_names().end());
      return d.within_watermark() ? in.DropDuplicatesWithinWatermark(keys)
                                  : in.DropDuplicates(keys);
    }
    case sc::Relation::kAggregate: {
      const sc::Aggregate& a = rel.aggregate();
      if (a.group_type() != sc::Aggregate::GROUP_TYPE_GROUPBY) {
        return NotYet("groupBy of type " + sc::Aggregate::GroupType_Name(a.group_type()) +
                      " on a stream (rollup, cube, pivot, grouping sets)");
      }
      SLUICE_ASSIGN_OR_RETURN(sluice::DataFrame in, Frame(a.input(), t));
      SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> keys, exprs(a.grouping_expressions()));
      SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> aggs, exprs(a.aggregate_expressions()));
      return in.GroupBy(keys).Agg(aggs);
    }
    case sc::Relation::kSubqueryAlias: {
      const sc::SubqueryAlias& a = rel.subquery_alias();
      if (a.qualifier_size()) return NotYet("an alias with a qualifier");
      SLUICE_ASSIGN_OR_RETURN(sluice::DataFrame in, Frame(a.input(), t));
      return in.Alias(a.alias());
    }
    case sc::Relation::kJoin:
      return JoinFrame(rel.join(), t);
    default:
      return NotYet("the relation " + RelationWithApi(RelationName(rel)) + " on a stream");
  }
}

Result<sluice::DataFrame> SessionStreams::JoinFrame(const sc::Join& j, PlanTranslator& t) {
  if (j.has_join_data_type()) return NotYet("joinWith (a join of typed rows) on a stream");
  SLUICE_ASSIGN_OR_RETURN(std::string how, JoinHow(j.join_type()));
  // Each side by its alias (df.alias("x")) or "l" / "r"; the condition's df.col qualified so.
  auto side = [&](const sc::Relation& r, const char* fallback,
                  std::string* name) -> Result<sluice::DataFrame> {
    mu_.AssertHeld();  // held by JoinFrame's caller; the analysis does not see into lambdas
    const bool aliased = r.has_subquery_alias() && r.subquery_alias().qualifier_size() == 0;
    *name = aliased ? r.subquery_alias().alias() : fallback;
    SLUICE_ASSIGN_OR_RETURN(sluice::DataFrame f,
                            Frame(aliased ? r.subquery_alias().input() : r, t));
    return f.Alias(*name);
  };
  std::string ln, rn;
  SLUICE_ASSIGN_OR_RETURN(sluice::DataFrame left, side(j.left(), "l", &ln));
  SLUICE_ASSIGN_OR_RETURN(sluice::DataFrame right, side(j.right(), "r", &rn));
  const std::string lq = dialect::QuoteSparkName(ln), rq = dialect::QuoteSparkName(rn);
  if (j.using_columns_size() == 0) {
    std::map<int64_t, std::string> qualifiers;
    for (int64_t id : PlanTranslator::PlanIds(j.left())) qualifiers[id] = lq;
    for (int64_t id : PlanTranslator::PlanIds(j.right())) qualifiers[id] = rq;
    std::string cond = "TRUE";
    if (j.has_join_condition()) {
      SLUICE_ASSIGN_OR_RETURN(cond, t.QualifiedExpr(j.join_condition(), qualifiers));
    } else if (how == "inner") {
      how = "cross";  // an inner join without a condition: every pair, as Spark
    }
    return left.Join(right, cond, how);  // the left side's columns, then the right side's
  }
  if (j.has_join_condition()) {
    return Status::InvalidArgument("Spark Connect: a join with both a condition and columns");
  }
  if (how == "cross") how = "inner";
  // On column names, Spark's columns: the keys (the left side's; the right side's for a right
  // join; both merged for a full join), the left side's others, the right side's others (none
  // for semi and anti joins).
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> ls, ColumnNames(left));
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> rs, ColumnNames(right));
  std::vector<bool> lkey(ls.size(), false), rkey(rs.size(), false);
  std::vector<std::string> on, list;
  for (const std::string& k : j.using_columns()) {
    std::optional<size_t> li = FindName(ls, k), ri = FindName(rs, k);
    if (!li || !ri) {
      return Status::InvalidArgument("[UNRESOLVED_USING_COLUMN_FOR_JOIN] USING column `" + k +
                                     "` cannot be resolved on the " + (li ? "right" : "left") +
                                     " side of the join");
    }
    lkey[*li] = rkey[*ri] = true;
    const std::string l = lq + "." + dialect::QuoteSparkName(ls[*li]);
    const std::string r = rq + "." + dialect::QuoteSparkName(rs[*ri]);
    on.push_back(l + " = " + r);
    const std::string as = " AS " + dialect::QuoteSparkName(how == "right" ? rs[*ri] : ls[*li]);
    if (how == "right") {
      list.push_back(r + as);
    } else if (how == "full") {
      list.push_back("COALESCE(" + l + ", " + r + ")" + as);
    } else {
      list.push_back(l + as);
    }
  }
  for (size_t i = 0; i < ls.size(); ++i) {
    if (!lkey[i]) list.push_back(lq + "." + dialect::QuoteSparkName(ls[i]));
  }
  if (how != "semi" && how != "anti") {
    for (size_t i = 0; i < rs.size(); ++i) {
      if (!rkey[i]) list.push_back(rq + "." + dialect::QuoteSparkName(rs[i]));
    }
  }
  std::string cond;
  for (const std::string& c : on) cond += (cond.empty() ? "" : " AND ") + c;
  return left.Join(right, cond, how).SelectExpr(list);
}

Status SessionStreams::Start(const sc::WriteStreamOperationStart& start, PlanTranslator& t,
                             sc::WriteStreamOperationStartResult* result) {
  if (start.has_foreach_writer()) return NotYet("writeStream.foreach");
  if (start.clustering_column_names_size()) return NotYet("writeStream.clusterBy");
  std::shared_ptr<ForeachBatchRunner> runner;
  if (start.has_foreach_batch()) {
    if (!start.foreach_batch().has_python_function()) {
      return NotYet("writeStream.foreachBatch of a Scala function");
    }
    const sc::PythonUDF& fn = start.foreach_batch().python_function();
    ForeachBatchOptions fo;
    fo.config = worker_config_;
    fo.session_id = session_id_;
    fo.python_version = fn.python_ver();
    fo.command = fn.command();
    fo.cache = cache_;
    runner = std::make_shared<ForeachBatchRunner>(std::move(fo));
  }
  MutexLock lock(&mu_);
  SLUICE_RETURN_NOT_OK(OpenApi());
  SLUICE_ASSIGN_OR_RETURN(sluice::DataFrame frame, Frame(start.input(), t));
  SLUICE_RETURN_NOT_OK(frame.status());
  sluice::DataStreamWriter writer = frame.WriteStream();
  if (runner) {
    writer.ForeachBatch([runner](const sluice::DataFrame& batch, int64_t batch_id) -> Status {
      return runner->Run(batch, batch_id);
    });
  } else if (!start.format().empty()) {
    writer.Format(start.format());
  } else if (!start.has_table_name()) {
    return NotYet("writeStream without format(...) (Spark's default sink, parquet files)");
  }
  for (const auto& [key, value] : start.options()) writer.Option(key, value);
  switch (start.trigger_case()) {
    case sc::WriteStreamOperationStart::kProcessingTimeInterval:
      writer.Trigger(sluice::Trigger::ProcessingTime(start.processing_time_interval()));
      break;
    case sc::WriteStreamOperationStart::kAvailableNow:
      writer.Trigger(sluice::Trigger::AvailableNow());
      break;
    case sc::WriteStreamOperationStart::kOnce:
      writer.Trigger(sluice::Trigger::Once());
      break;
    case sc::WriteStreamOperationStart::kContinuousCheckpointInterval:
      return NotYet("trigger(continuous=...): Sluice runs micro-batches only");
    case sc::WriteStreamOperationStart::TRIGGER_NOT_SET:
      break;
    default:
      return NotYet("this trigger");
  }
  if (!start.output_mode().empty()) writer.OutputMode(start.output_mode());
  if (!start.query_name().empty()) writer.QueryName(start.query_name());
  if (start.partitioning_column_names_size()) {
    writer.PartitionBy(std::vector<std::string>(start.partitioning_column_names().begin(),
                                                start.partitioning_column_names().end()));
  }
  std::shared_ptr<sluice::StreamingQuery> query;
  if (start.has_table_name()) {
    SLUICE_ASSIGN_OR_RETURN(query, writer.ToTable(start.table_name()));
  } else if (start.has_path()) {
    SLUICE_ASSIGN_OR_RETURN(query, writer.Start(start.path()));
  } else {
    SLUICE_ASSIGN_OR_RETURN(query, writer.Start());
  }
  result->mutable_query_id()->set_id(query->Id());
  result->mutable_query_id()->set_run_id(query->RunId());
  if (query->Name()) result->set_name(*query->Name());
  if (bus_->IsOpen()) {
    result->set_query_started_event_json(
        QueryListenerBus::StartedEventJson(query->Id(), query->RunId(), query->Name()));
  }
  queries_[query->RunId()] = query;
  latest_run_[query->Id()] = query->RunId();
  if (runner) {
    {
      MutexLock wl(&workers_->mu);
      workers_->by_run[query->RunId()] = runner;
    }
    // Ended before it was registered (its end event found nothing to close): close it now.
    if (!query->IsActive()) workers_->Close(query->RunId());
  }
  return Status::OK();
}

Status SessionStreams::Command(const sc::StreamingQueryCommand& cmd,
                               sc::StreamingQueryCommandResult* result, bool* query_failed) {
  // The run the client's StreamingQuery object stands for (a restart on the same checkpoint is
  // another run of the same id, as in Spark).
  std::shared_ptr<sluice::StreamingQuery> found =
      Find(cmd.query_id().id(), cmd.query_id().run_id());
  if (!found) {
    return Status::NotFound("Spark Connect: no streaming query with id " + cmd.query_id().id() +
                            " in this session");
  }
  sluice::StreamingQuery& q = *found;
  // The query's own error (it failed), told apart from the command's.
  auto failed = [&](Status st) {
    if (!st.ok() && query_failed != nullptr && q.Exception().has_value()) *query_failed = true;
    return st;
  };
  *result->mutable_query_id() = cmd.query_id();
  using K = sc::StreamingQueryCommand::CommandCase;
  switch (cmd.command_case()) {
    case K::kStatus: {
      sluice::StreamingQueryStatus s = q.CurrentStatus();
      auto* out = result->mutable_status();
      out->set_status_message(s.message);
      out->set_is_data_available(s.is_data_available);
      out->set_is_trigger_active(s.is_trigger_active);
      out->set_is_active(q.IsActive());
      return Status::OK();
    }
    case K::kLastProgress: {
      auto* out = result->mutable_recent_progress();
      if (auto p = q.LastProgress()) out->add_recent_progress_json(p->Json());
      return Status::OK();
    }
    case K::kRecentProgress: {
      auto* out = result->mutable_recent_progress();
      for (const auto& p : q.RecentProgress()) out->add_recent_progress_json(p.Json());
      return Status::OK();
    }
    case K::kStop: {
      // A batch in progress completes (its foreachBatch call too), then the worker is killed.
      Status st = q.Stop();
      CloseWorker(q.RunId());
      return st;
    }
    case K::kProcessAllAvailable:
      return failed(q.ProcessAllAvailable());
    case K::kException: {
      auto* out = result->mutable_exception();
      if (std::optional<sluice::Status> e = q.Exception()) {
        // The client drops the text before the first ": " (the JVM exception's class).
        out->set_exception_message("StreamingQueryException: " + e->ToString());
      }
      return Status::OK();
    }
    case K::kAwaitTermination: {
      auto* out = result->mutable_await_termination();
      if (cmd.await_termination().has_timeout_ms()) {
        Result<bool> ended =
            q.AwaitTermination(std::chrono::milliseconds(cmd.await_termination().timeout_ms()));
        if (!ended.ok()) return failed(ended.status());
        out->set_terminated(*ended);
        return Status::OK();
      }
      SLUICE_RETURN_NOT_OK(failed(q.AwaitTermination()));
      out->set_terminated(true);
      return Status::OK();
    }
    case K::kExplain:
      return NotYet("StreamingQuery.explain()");
    default:
      return Status::InvalidArgument("Spark Connect: a streaming query command without a command");
  }
}

Status SessionStreams::Manager(const sc::StreamingQueryManagerCommand& cmd,
                               sc::StreamingQueryManagerCommandResult* result, bool* query_failed) {
  const std::vector<std::shared_ptr<sluice::StreamingQuery>> queries = All();
  auto instance = [](const sluice::StreamingQuery& q,
                     sc::StreamingQueryManagerCommandResult::StreamingQueryInstance* out) {
    out->mutable_id()->set_id(q.Id());
    out->mutable_id()->set_run_id(q.RunId());
    if (q.Name()) out->set_name(*q.Name());
  };
  using K = sc::StreamingQueryManagerCommand::CommandCase;
  switch (cmd.command_case()) {
    case K::kActive: {
      auto* out = result->mutable_active();
      for (const auto& q : queries) {
        if (q->IsActive()) instance(*q, out->add_active_queries());
      }
      return Status::OK();
    }
    case K::kGetQuery: {
      // Spark's spark.streams.get: the active query of that id, else none.
      std::shared_ptr<sluice::StreamingQuery> q = Find(cmd.get_query());
      if (q && q->IsActive()) instance(*q, result->mutable_query());
      return Status::OK();
    }
    case K::kAwaitAnyTermination: {
      const bool timed = cmd.await_any_termination().has_timeout_ms();
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::milliseconds(cmd.await_any_termination().timeout_ms());
      auto forgotten = [this](const std::string& run_id) {
        MutexLock lock(&mu_);
        return reset_.count(run_id) > 0;
      };
      while (true) {
        for (const auto& q : queries) {
          if (q->IsActive() || forgotten(q->RunId())) continue;
          if (std::optional<sluice::Status> e = q->Exception()) {
            if (query_failed != nullptr) *query_failed = true;
            return *e;
          }
          result->mutable_await_any_termination()->set_terminated(true);
          return Status::OK();
        }
        if (timed && std::chrono::steady_clock::now() >= deadline) {
          result->mutable_await_any_termination()->set_terminated(false);
          return Status::OK();
        }
        // Wait on one active query a little; none active and none ended: nothing will end.
        bool waited = false;
        for (const auto& q : queries) {
          if (!q->IsActive()) continue;
          SLUICE_RETURN_NOT_OK(q->AwaitTermination(std::chrono::milliseconds(50)).status());
          waited = true;
          break;
        }
        if (!waited && !timed) {
          return Status::InvalidArgument(
              "Spark Connect: awaitAnyTermination() without a timeout in a session without "
              "active queries would never return");
        }
        if (!waited) std::this_thread::sleep_until(deadline);
      }
    }
    case K::kResetTerminated: {
      MutexLock lock(&mu_);
      for (const auto& q : queries) {
        if (!q->IsActive()) reset_.insert(q->RunId());
      }
      return Status::OK();
    }
    case K::kAddListener:
    case K::kRemoveListener:
    case K::kListListeners:
      return NotYet(
          "server-side streaming query listeners (StreamingQueryManagerCommand "
          "add_listener, of clients before PySpark 4; PySpark 4's addListener is served)");
    default:
      return Status::InvalidArgument(
          "Spark Connect: a streaming query manager command without a "
          "command");
  }
}

}  // namespace sluice::connect
