#include "plan/stateful_plan.h"

#include "common/strings.h"
#include "plan/window_sql.h"

namespace sluice::plan {
namespace {

constexpr char kShufflePartitionsKey[] = "sluice.sql.shuffle.partitions";

}  // namespace

std::unique_ptr<StreamingPlan> StreamingPlan::Stateless(ParsedStreamingQuery query, std::string sql,
                                                        std::vector<StatsFilters> stats_filters) {
  std::unique_ptr<StreamingPlan> plan(new StreamingPlan());
  plan->query_ = std::move(query);
  plan->sql_ = std::move(sql);
  plan->stats_filters_ = std::move(stats_filters);
  return plan;
}

std::unique_ptr<StreamingPlan> StreamingPlan::Stateful(ParsedStreamingQuery query,
                                                       StatefulPlanSpec spec,
                                                       std::vector<StatsFilters> stats_filters) {
  std::unique_ptr<StreamingPlan> plan(new StreamingPlan());
  plan->query_ = std::move(query);
  plan->spec_.emplace(std::move(spec));
  plan->stats_filters_ = std::move(stats_filters);
  return plan;
}

std::string StreamingPlan::StreamViewSql(size_t i, const StreamRelation& relation) {
  std::string select = "SELECT *";
  if (relation.watermark && !relation.watermark->IsPlainColumn()) {
    select += ", (" + relation.watermark->expression + ") AS " +
              QuoteIdentifier(relation.watermark->column);
  }
  return "CREATE OR REPLACE TEMP VIEW " + StreamViewName(i) + " AS " + select + " FROM " +
         SqlPlan::SourceTableName(i);
}

Status StreamingPlan::Open(const PlanContext& context) {
  if (context.engine == nullptr) return Status::InvalidArgument("StreamingPlan: no engine");
  SLUICE_ASSIGN_OR_RETURN(conn_, context.engine->Connect());
  SLUICE_RETURN_NOT_OK_CTX(DefineWindowMacros(*conn_), "defining the window functions");
  prepare_ = context.prepare_connection;
  stats_sql_.assign(query_.streams.size(), "");
  if (spec_) {
    if (spec_->op == nullptr)
      return Status::Internal("StreamingPlan: stateful plan without operator");
    ops::OperatorContext oc;
    oc.engine = context.engine;
    oc.fs = context.fs;
    oc.checkpoint_root = context.checkpoint_root;
    oc.operator_id = 0;
    oc.output_mode = context.output_mode;
    oc.conf = context.conf;
    auto it = context.conf.find(kShufflePartitionsKey);
    if (it != context.conf.end()) {
      int32_t n = 0;
      for (char c : it->second) {
        if (c < '0' || c > '9' || n > 1000000) {
          return Status::InvalidArgument(std::string(kShufflePartitionsKey) +
                                         " must be a positive integer, not '" + it->second + "'");
        }
        n = n * 10 + (c - '0');
      }
      if (n < 1) {
        return Status::InvalidArgument(std::string(kShufflePartitionsKey) +
                                       " must be a positive integer, not '" + it->second + "'");
      }
      oc.num_partitions = n;
    }
    SLUICE_RETURN_NOT_OK_CTX(spec_->op->Open(oc), "opening operator " + spec_->operator_name);
  }
  return Status::OK();
}

std::vector<WatermarkNode> StreamingPlan::watermark_nodes() const {
  std::vector<WatermarkNode> out;
  for (const auto& s : query_.streams) {
    if (s.watermark) out.push_back({s.watermark->column, s.watermark->delay_ms});
  }
  return out;
}

Result<PlanOutput> StreamingPlan::Execute(const PlanInput& input) {
  const std::string ctx = "running the query of batch " + input.batch_id.ToString();
  if (conn_ == nullptr) return Status::Internal("StreamingPlan::Execute before Open");
  if (input.sources.size() != query_.streams.size()) {
    return Status::Internal(ctx + ": " + std::to_string(input.sources.size()) +
                            " source batches for a plan with " +
                            std::to_string(query_.streams.size()) + " sources");
  }
  for (size_t i = 0; i < input.sources.size(); ++i) {
    SLUICE_RETURN_NOT_OK_CTX(conn_->RegisterBatch(SqlPlan::SourceTableName(i), input.sources[i]),
                             ctx + ", registering source " + std::to_string(i));
    SLUICE_RETURN_NOT_OK_CTX(conn_->Execute(StreamViewSql(i, query_.streams[i])),
                             ctx + ", the event time of source " + std::to_string(i));
  }
  if (prepare_) SLUICE_RETURN_NOT_OK_CTX(prepare_(*conn_), ctx);

  PlanOutput out;
  for (size_t i = 0; i < query_.streams.size(); ++i) {
    if (!query_.streams[i].watermark) continue;
    if (stats_sql_[i].empty()) {
      SLUICE_ASSIGN_OR_RETURN_CTX(
          auto probe, conn_->Query("SELECT * FROM " + StreamViewName(i) + " LIMIT 0"), ctx);
      stats_sql_[i] =
          EventTimeStatsSql(i, query_.streams[i], probe.schema(),
                            i < stats_filters_.size() ? stats_filters_[i] : StatsFilters{});
    }
    SLUICE_ASSIGN_OR_RETURN_CTX(auto row, conn_->Query(stats_sql_[i]),
                                ctx + ", event-time statistics of source " + std::to_string(i));
    SLUICE_ASSIGN_OR_RETURN_CTX(auto stats, ReadEventTimeStats(row), ctx);
    out.event_time.push_back(stats);
  }

  if (!spec_) {
    SLUICE_ASSIGN_OR_RETURN_CTX(out.rows, conn_->Query(sql_), ctx);
    return out;
  }
  std::vector<engine::Batch> inputs;
  for (size_t k = 0; k < spec_->input_sqls.size(); ++k) {
    SLUICE_ASSIGN_OR_RETURN_CTX(auto rows, conn_->Query(spec_->input_sqls[k]),
                                ctx + ", operator input " + std::to_string(k));
    inputs.push_back(std::move(rows));
  }
  ops::OperatorBatch ob;
  ob.batch_id = input.batch_id;
  ob.late_watermark_ms = input.previous_watermark_ms;
  ob.eviction_watermark_ms = input.batch_watermark_ms;
  ob.batch_timestamp_ms = input.batch_timestamp_ms;
  ob.no_data_batch = input.no_data_batch;
  SLUICE_ASSIGN_OR_RETURN_CTX(auto op_out, spec_->op->Process(ob, inputs), ctx);
  out.state_operators.push_back(spec_->op->Progress());
  if (spec_->output_sql.empty()) {
    out.rows = std::move(op_out);
    return out;
  }
  SLUICE_RETURN_NOT_OK_CTX(conn_->RegisterBatch("__op_output", op_out), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(out.rows, conn_->Query(spec_->output_sql), ctx + ", output");
  return out;
}

bool StreamingPlan::WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const {
  return spec_ && spec_->op && spec_->op->WantsNoDataBatch(used_watermark_ms, next_watermark_ms);
}

std::string StreamingPlan::Description() const {
  if (!spec_) return "StreamingPlan[" + sql_ + "]";
  return "StreamingPlan[" + spec_->operator_name + "]";
}

}  // namespace sluice::plan
