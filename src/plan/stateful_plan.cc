#include "plan/stateful_plan.h"

#include "common/strings.h"
#include "engine/relation_names.h"
#include "plan/operator_check.h"
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
  const auto& streams = plan->query_.streams;
  plan->identity_ = streams.size() == 1 &&
                    (!streams[0].watermark || streams[0].watermark->IsPlainColumn()) &&
                    IsSelectStarFrom(plan->sql_, StreamViewName(0));
  return plan;
}

std::unique_ptr<StreamingPlan> StreamingPlan::Stateful(ParsedStreamingQuery query,
                                                       StatefulPlanSpec spec,
                                                       std::vector<StatsFilters> stats_filters) {
  std::vector<StatefulPlanSpec> stages;
  stages.push_back(std::move(spec));
  return Chain(std::move(query), std::move(stages), std::move(stats_filters));
}

std::unique_ptr<StreamingPlan> StreamingPlan::Chain(ParsedStreamingQuery query,
                                                    std::vector<StatefulPlanSpec> stages,
                                                    std::vector<StatsFilters> stats_filters) {
  std::unique_ptr<StreamingPlan> plan(new StreamingPlan());
  plan->query_ = std::move(query);
  plan->stages_ = std::move(stages);
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
         engine::SourceTableName(i);
}

Status StreamingPlan::Open(const PlanContext& context) {
  if (context.engine == nullptr) return Status::InvalidArgument("StreamingPlan: no engine");
  SLUICE_ASSIGN_OR_RETURN(conn_, context.engine->Connect());
  SLUICE_RETURN_NOT_OK_CTX(DefineWindowMacros(*conn_), "defining the window functions");
  prepare_ = context.prepare_connection;
  stats_sql_.assign(query_.streams.size(), "");
  if (!stages_.empty() && context.fs) {
    std::vector<std::string> names;  // by operator id: top-down
    for (auto it = stages_.rbegin(); it != stages_.rend(); ++it) names.push_back(it->operator_name);
    SLUICE_RETURN_NOT_OK(CheckStatefulOperatorsMatch(*context.fs, context.checkpoint_root, names));
  }
  for (size_t k = 0; k < stages_.size(); ++k) {
    StatefulPlanSpec& stage = stages_[k];
    if (stage.op == nullptr)
      return Status::Internal("StreamingPlan: stateful plan without operator");
    ops::OperatorContext oc;
    oc.engine = context.engine;
    oc.fs = context.fs;
    oc.checkpoint_root = context.checkpoint_root;
    oc.operator_id = static_cast<int64_t>(stages_.size() - 1 - k);  // top-down, as Spark's
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
    SLUICE_RETURN_NOT_OK_CTX(
        stage.op->Open(oc),
        "opening operator " + std::to_string(oc.operator_id) + " (" + stage.operator_name + ")");
  }
  return Status::OK();
}

// Spark: "Event time must be defined on a window or a timestamp". A WATERMARK on a column of
// another type is refused naming the column and its type, not left to an internal cast error.
static Status CheckEventTimeType(const StreamRelation& relation, const engine::Schema& schema) {
  const std::string& column = relation.watermark->column;
  for (const engine::Field& f : schema) {
    if (f.name != column) continue;
    if (f.type.id == engine::TypeId::kTimestamp || f.type.id == engine::TypeId::kTimestampTz) {
      return Status::OK();
    }
    const std::string of =
        engine::HasStreamViewPrefix(relation.alias) ? std::string() : " of " + relation.alias;
    return Status::InvalidArgument(
        "WATERMARK " + column + of + ": the event-time column " + column + " is " + f.type.ToSql() +
        ", not a TIMESTAMP (convert it in the clause: WATERMARK <expression> AS <name> DELAY OF "
        "..., e.g. to_timestamp(" +
        column + ") for epoch seconds or CAST(" + column + " AS TIMESTAMP) for text)");
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
  // identity_: the output is the source batch itself (no copy). The stream view is still needed
  // for a watermark's event-time statistics.
  if (identity_ && !query_.streams[0].watermark) {
    PlanOutput out;
    out.rows = input.sources[0];
    return out;
  }
  for (size_t i = 0; i < input.sources.size(); ++i) {
    SLUICE_RETURN_NOT_OK_CTX(conn_->RegisterBatch(engine::SourceTableName(i), input.sources[i]),
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
      SLUICE_RETURN_NOT_OK(CheckEventTimeType(query_.streams[i], probe.schema()));
      stats_sql_[i] =
          EventTimeStatsSql(i, query_.streams[i], probe.schema(),
                            i < stats_filters_.size() ? stats_filters_[i] : StatsFilters{});
    }
    SLUICE_ASSIGN_OR_RETURN_CTX(auto row, conn_->Query(stats_sql_[i]),
                                ctx + ", event-time statistics of source " + std::to_string(i));
    SLUICE_ASSIGN_OR_RETURN_CTX(auto stats, ReadEventTimeStats(row), ctx);
    out.event_time.push_back(stats);
  }

  if (identity_) {
    out.rows = input.sources[0];
    return out;
  }
  if (stages_.empty()) {
    SLUICE_ASSIGN_OR_RETURN_CTX(out.rows, conn_->Query(sql_), ctx);
    return out;
  }
  int64_t late_ms = input.previous_watermark_ms;
  int64_t eviction_ms = input.batch_watermark_ms;
  for (size_t k = 0; k < stages_.size(); ++k) {
    StatefulPlanSpec& stage = stages_[k];
    const std::string sctx = stages_.size() == 1
                                 ? ctx
                                 : ctx + ", operator " + std::to_string(stages_.size() - 1 - k) +
                                       " (" + stage.operator_name + ")";
    std::vector<engine::Batch> inputs;
    for (size_t i = 0; i < stage.input_sqls.size(); ++i) {
      SLUICE_ASSIGN_OR_RETURN_CTX(auto rows, conn_->Query(stage.input_sqls[i]),
                                  sctx + ", operator input " + std::to_string(i));
      inputs.push_back(std::move(rows));
    }
    ops::OperatorBatch ob;
    ob.batch_id = input.batch_id;
    ob.late_watermark_ms = late_ms;
    ob.eviction_watermark_ms = eviction_ms;
    ob.batch_timestamp_ms = input.batch_timestamp_ms;
    ob.no_data_batch = input.no_data_batch;
    SLUICE_ASSIGN_OR_RETURN_CTX(auto op_out, stage.op->Process(ob, inputs), sctx);
    // Progress lists the top operator (the last stage) first, as Spark's.
    out.state_operators.insert(out.state_operators.begin(), stage.op->Progress());
    engine::Batch rows;
    if (stage.output_sql.empty()) {
      rows = std::move(op_out);
    } else {
      SLUICE_RETURN_NOT_OK_CTX(conn_->RegisterBatch(engine::kOperatorOutputTable, op_out), sctx);
      SLUICE_ASSIGN_OR_RETURN_CTX(rows, conn_->Query(stage.output_sql), sctx + ", output");
    }
    if (k + 1 == stages_.size()) {
      if (!stage.post_sql.empty()) {
        SLUICE_RETURN_NOT_OK_CTX(conn_->RegisterBatch(StageTableName(k), rows), sctx);
        SLUICE_ASSIGN_OR_RETURN_CTX(rows, conn_->Query(stage.post_sql),
                                    sctx + ", the query over its output");
      }
      out.rows = std::move(rows);
      break;
    }
    SLUICE_RETURN_NOT_OK_CTX(conn_->RegisterBatch(StageTableName(k), rows), sctx);
    late_ms = PropagateWatermark(late_ms, stage.output_watermark_offset_ms);
    eviction_ms = PropagateWatermark(eviction_ms, stage.output_watermark_offset_ms);
  }
  return out;
}

bool StreamingPlan::WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const {
  for (const StatefulPlanSpec& stage : stages_) {
    if (stage.op && stage.op->WantsNoDataBatch(used_watermark_ms, next_watermark_ms)) return true;
    used_watermark_ms = PropagateWatermark(used_watermark_ms, stage.output_watermark_offset_ms);
    next_watermark_ms = PropagateWatermark(next_watermark_ms, stage.output_watermark_offset_ms);
  }
  return false;
}

std::string StreamingPlan::Description() const {
  if (stages_.empty()) return "StreamingPlan[" + sql_ + "]";
  std::string names;
  for (auto it = stages_.rbegin(); it != stages_.rend(); ++it) {
    names += (names.empty() ? "" : " <- ") + it->operator_name;
  }
  return "StreamingPlan[" + names + "]";
}

}  // namespace sluice::plan
