#include "api/transform_with_state_plan.h"

#include <algorithm>
#include <thread>

#include "ops/transform_with_state.h"
#include "plan/planner.h"
#include "plan/stateful_plan.h"
#include "plan/stream_query_parser.h"
#include "sources/schema_text.h"

namespace sluice::api {
namespace {

const char* ModeName(sluice::OutputMode m) {
  switch (m) {
    case sluice::OutputMode::kAppend:
      return "Append";
    case sluice::OutputMode::kUpdate:
      return "Update";
    case sluice::OutputMode::kComplete:
      return "Complete";
  }
  return "?";
}

}  // namespace

Result<TransformWithStatePlan> PlanTransformWithState(const std::shared_ptr<SessionState>& session,
                                                      const NodePtr& node, engine::Connection* conn,
                                                      const StreamSchemas& schemas,
                                                      sluice::OutputMode query_mode) {
  if (node->kind != FrameNode::Kind::kTransformWithState || node->tws == nullptr) {
    return Status::Internal("PlanTransformWithState: not a TransformWithState node");
  }
  const TransformWithStateSpec& spec = *node->tws;
  if (query_mode == sluice::OutputMode::kComplete) {
    return Status::InvalidArgument(
        "Complete output mode not supported when there are no streaming aggregations on "
        "streaming DataFrames/Datasets: TransformWithState runs in Append or Update mode");
  }
  const sluice::OutputMode op_mode = spec.output_mode == OutputMode::kUpdate
                                         ? sluice::OutputMode::kUpdate
                                         : sluice::OutputMode::kAppend;
  if (op_mode != query_mode) {
    return Status::InvalidArgument(
        std::string("TransformWithState was given OutputMode ") + ModeName(op_mode) +
        " but the query runs in " + ModeName(query_mode) +
        " mode; they must be the same (Spark's rule for transformWithState without an "
        "aggregation after it): change one of them");
  }
  const NodePtr& child = node->children[0];
  if (HasStatefulStreamNode(child)) {
    return Status::NotSupported(
        "TransformWithState over a streaming aggregation, deduplication, join of streams or "
        "another TransformWithState is not supported (one stateful operation per query)");
  }

  TransformWithStatePlan out;
  SLUICE_ASSIGN_OR_RETURN(
      out.compiled, Compile(session.get(), child, conn, schemas, CompileMode::kStreamingPlan));
  SLUICE_ASSIGN_OR_RETURN_CTX(
      engine::Batch probe,
      conn->Query("SELECT * FROM (" + out.compiled.sql + ") AS __tws_probe LIMIT 0"),
      "TransformWithState: the frame under it");
  ops::TransformWithStateOptions o;
  for (const std::string& key : node->list) {
    const engine::Field* found = nullptr;
    for (const engine::Field& f : probe.schema()) {
      if (AsciiLower(f.name) == AsciiLower(key)) found = &f;
    }
    if (found == nullptr) {
      std::string cols;
      for (const engine::Field& f : probe.schema()) cols += (cols.empty() ? "" : ", ") + f.name;
      return Status::InvalidArgument("TransformWithState: the GroupBy key \"" + key +
                                     "\" is not a column of the frame (columns: " + cols +
                                     "); add it with WithColumn first");
    }
    o.key_columns.push_back(found->name);
  }
  o.input_schema = probe.schema();
  o.factory = spec.factory;
  o.time_mode = spec.time_mode;
  // One processor per partition, so partitions may run in parallel (as the other operators').
  o.parallelism = static_cast<int>(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 4));
  std::optional<std::string> watermark;
  for (const CompiledQuery::Relation& r : out.compiled.relations) {
    if (r.watermark) watermark = *r.watermark;
  }
  if (spec.time_mode == TimeMode::kEventTime) {
    if (!watermark) {
      return Status::InvalidArgument(
          "TransformWithState with TimeMode::kEventTime needs a watermark: call "
          "WithWatermark(column, delay) on the stream before GroupBy");
    }
    for (const engine::Field& f : probe.schema()) {
      if (AsciiLower(f.name) == AsciiLower(*watermark)) o.event_time_column = f.name;
    }
  }
  SLUICE_ASSIGN_OR_RETURN(
      o.output_schema,
      sources::ParseSchemaText(conn, spec.output_schema, "TransformWithState output schema"));
  if (spec.initial_state.has_value()) {
    SLUICE_ASSIGN_OR_RETURN_CTX(o.initial_state, RunBatch(*spec.initial_state),
                                "TransformWithState: the initial state");
  }
  for (const std::string& k : o.key_columns) {
    bool present = false;
    for (const engine::Field& f : o.output_schema)
      present = present || AsciiLower(f.name) == AsciiLower(k);
    if (!present) {
      out.update_keys.clear();
      break;
    }
    out.update_keys.push_back(k);
  }

  plan::ParsedStreamingQuery parsed;
  parsed.sql = out.compiled.sql;
  for (const CompiledQuery::Relation& r : out.compiled.relations) {
    plan::StreamRelation relation;
    relation.alias = r.alias;
    if (r.watermark)
      relation.watermark = plan::WatermarkSpec{*r.watermark, *r.watermark, r.delay_ms};
    parsed.streams.push_back(std::move(relation));
  }
  plan::StatefulPlanSpec stage;
  stage.operator_name = ops::kTransformWithStateOperatorName;
  stage.input_sqls = {out.compiled.sql};
  stage.op = std::make_unique<ops::TransformWithState>(std::move(o));
  stage.update_keys = out.update_keys;
  out.plan = plan::StreamingPlan::Stateful(std::move(parsed), std::move(stage), {});
  return out;
}

}  // namespace sluice::api
