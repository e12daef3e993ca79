#include "plan/incremental_plan.h"

namespace sluice::plan {

Status SqlPlan::Open(const PlanContext& context) {
  if (context.engine == nullptr) return Status::InvalidArgument("SqlPlan: no engine");
  SLUICE_ASSIGN_OR_RETURN(conn_, context.engine->Connect());
  context_prepare_ = context.prepare_connection;
  return Status::OK();
}

Result<PlanOutput> SqlPlan::Execute(const PlanInput& input) {
  const std::string ctx = "running the query of batch " + input.batch_id.ToString();
  if (conn_ == nullptr) return Status::Internal("SqlPlan::Execute before Open");
  if (input.sources.size() != num_sources_) {
    return Status::Internal(ctx + ": " + std::to_string(input.sources.size()) +
                            " source batches for a plan with " + std::to_string(num_sources_) +
                            " sources");
  }
  for (size_t i = 0; i < input.sources.size(); ++i) {
    SLUICE_RETURN_NOT_OK_CTX(conn_->RegisterBatch(SourceTableName(i), input.sources[i]),
                             ctx + ", registering source " + std::to_string(i));
  }
  if (context_prepare_) SLUICE_RETURN_NOT_OK_CTX(context_prepare_(*conn_), ctx);
  PlanOutput out;
  SLUICE_ASSIGN_OR_RETURN_CTX(out.rows, conn_->Query(sql_), ctx);
  return out;
}

}  // namespace sluice::plan
