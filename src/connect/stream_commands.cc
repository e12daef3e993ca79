#include "connect/stream_commands.h"

#include <chrono>

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

}  // namespace

SessionStreams::SessionStreams(std::string warehouse) : warehouse_(std::move(warehouse)) {}

SessionStreams::~SessionStreams() {
  // Stop every query before the API session that runs them closes.
  for (auto& [id, query] : queries_) (void)query->Stop();
  queries_.clear();
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
  if (rel.has_read()) {
    const sc::Read& read = rel.read();
    if (!read.is_streaming()) {
      return NotYet("a stream joined or combined with a batch DataFrame");
    }
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
    default:
      return NotYet("the relation " + RelationName(rel) + " on a stream");
  }
}

Status SessionStreams::Start(const sc::WriteStreamOperationStart& start, PlanTranslator& t,
                             sc::WriteStreamOperationStartResult* result) {
  if (start.has_foreach_batch()) return NotYet("writeStream.foreachBatch");
  if (start.has_foreach_writer()) return NotYet("writeStream.foreach");
  if (start.clustering_column_names_size()) return NotYet("writeStream.clusterBy");
  if (!api_) {
    sluice::SessionOptions options;
    options.warehouse = warehouse_;
    SLUICE_ASSIGN_OR_RETURN(api_, sluice::Session::Open(options));
  }
  SLUICE_ASSIGN_OR_RETURN(sluice::DataFrame frame, Frame(start.input(), t));
  SLUICE_RETURN_NOT_OK(frame.status());
  sluice::DataStreamWriter writer = frame.WriteStream();
  if (!start.format().empty()) {
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
  queries_[query->Id()] = query;
  return Status::OK();
}

Status SessionStreams::Command(const sc::StreamingQueryCommand& cmd,
                               sc::StreamingQueryCommandResult* result) {
  auto it = queries_.find(cmd.query_id().id());
  if (it == queries_.end()) {
    return Status::NotFound("Spark Connect: no streaming query with id " + cmd.query_id().id() +
                            " in this session");
  }
  sluice::StreamingQuery& q = *it->second;
  *result->mutable_query_id() = cmd.query_id();
  using K = sc::StreamingQueryCommand::CommandCase;
  switch (cmd.command_case()) {
    case K::kStatus: {
      sluice::StreamingQueryStatus s = q.Status();
      auto* out = result->mutable_status();
      out->set_status_message(s.message);
      out->set_is_data_available(s.is_data_available);
      out->set_is_trigger_active(s.is_trigger_active);
      out->set_is_active(q.IsActive());
      return Status::OK();
    }
    case K::kLastProgress: {
      auto* out = result->mutable_recent_progress();
      if (std::optional<std::string> p = q.LastProgress()) out->add_recent_progress_json(*p);
      return Status::OK();
    }
    case K::kRecentProgress: {
      auto* out = result->mutable_recent_progress();
      for (const std::string& p : q.RecentProgress()) out->add_recent_progress_json(p);
      return Status::OK();
    }
    case K::kStop:
      return q.Stop();
    case K::kProcessAllAvailable:
      return q.ProcessAllAvailable();
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
        SLUICE_ASSIGN_OR_RETURN(
            bool ended,
            q.AwaitTermination(std::chrono::milliseconds(cmd.await_termination().timeout_ms())));
        out->set_terminated(ended);
        return Status::OK();
      }
      SLUICE_RETURN_NOT_OK(q.AwaitTermination());
      out->set_terminated(true);
      return Status::OK();
    }
    case K::kExplain:
      return NotYet("StreamingQuery.explain()");
    default:
      return Status::InvalidArgument("Spark Connect: a streaming query command without a command");
  }
}

}  // namespace sluice::connect
