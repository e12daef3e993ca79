#include "scaleout/partition_key_check.h"

#include "engine/relation_names.h"
#include "plan/stateful_plan.h"

namespace sluice::scaleout {
namespace {

std::string Text(const engine::Batch& b, size_t col) {
  std::optional<std::string> v = b.GetString(0, col);
  return v.has_value() ? "'" + *v + "'" : "NULL";
}

}  // namespace

Status PartitionKeyCheckPlan::Open(const plan::PlanContext& context) {
  if (context.engine == nullptr) return Status::InvalidArgument("PartitionKeyCheckPlan: no engine");
  SLUICE_ASSIGN_OR_RETURN(conn_, context.engine->Connect());
  return inner_->Open(context);
}

Status PartitionKeyCheckPlan::Check(const plan::PlanInput& input) {
  if (input.sources.empty() || input.sources[0].num_rows() == 0) return Status::OK();
  const std::string ctx = "batch " + input.batch_id.ToString() +
                          ": checking that the records' keys are their partitionedBy column " +
                          partitioning_.column;
  const std::string source = engine::SourceTableName(0);
  SLUICE_RETURN_NOT_OK_CTX(conn_->RegisterBatch(source, input.sources[0]), ctx);
  SLUICE_RETURN_NOT_OK_CTX(conn_->Execute(plan::StreamingPlan::StreamViewSql(0, relation_)), ctx);
  Result<engine::Batch> bad = conn_->Query(partitioning_.check_sql);
  (void)conn_->UnregisterBatch(source);
  if (!bad.ok()) return bad.status().WithContext(ctx);
  if (bad->num_rows() == 0) return Status::OK();
  Result<std::optional<int64_t>> partition = bad->GetInt64(0, 0);
  Result<std::optional<int64_t>> offset = bad->GetInt64(0, 1);
  auto num = [](const Result<std::optional<int64_t>>& v) {
    return v.ok() && v->has_value() ? std::to_string(**v) : std::string("?");
  };
  return Status::InvalidArgument(
      "the record of topic " + topic_ + " at partition " + num(partition) + ", offset " +
      num(offset) + " has the key " + Text(*bad, 2) + " but its partitionedBy column " +
      partitioning_.column + " is " + Text(*bad, 3) + ": the topic is not partitioned by " +
      partitioning_.column + ", so the per-partition state of the query would be wrong; " +
      "the task stops (" + ctx + ")");
}

Result<plan::PlanOutput> PartitionKeyCheckPlan::Execute(const plan::PlanInput& input) {
  SLUICE_RETURN_NOT_OK(Check(input));
  return inner_->Execute(input);
}

}  // namespace sluice::scaleout
