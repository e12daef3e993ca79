#include "api/frame_plan.h"

#include "api/transform_with_state_plan.h"
#include "engine/relation_names.h"
#include "plan/planner.h"
#include "plan/sql_ast.h"
#include "plan/stream_query_parser.h"

namespace sluice::api {
namespace {

// True when `node` is itself a stateful operation over a stream.
bool IsStatefulNode(const NodePtr& node) {
  using K = FrameNode::Kind;
  if (node->kind == K::kAggregate || node->kind == K::kDedup ||
      node->kind == K::kTransformWithState) {
    return HasStream(node);
  }
  if (node->kind == K::kJoin) {
    return HasStream(node->children[0]) && HasStream(node->children[1]);
  }
  return false;
}

// Transformations that SQL puts into the same SELECT as a join (so the planner sees them there).
bool IsJoinProjection(const NodePtr& node) {
  using K = FrameNode::Kind;
  return (node->kind == K::kSelect || node->kind == K::kWhere) && !node->children.empty() &&
         node->children[0]->kind == K::kJoin && IsStatefulNode(node->children[0]);
}

// Single-input stateless transformations, which can run on the stateful operator's output.
bool IsRowTransformation(const NodePtr& node) {
  using K = FrameNode::Kind;
  return node->kind == K::kSelect || node->kind == K::kWhere || node->kind == K::kWithColumn ||
         node->kind == K::kDrop || node->kind == K::kAlias;
}

constexpr char kPlanOutput[] = "__plan_output";

}  // namespace

FramePlan::FramePlan(std::shared_ptr<SessionState> session, NodePtr node,
                     std::shared_ptr<SchemaSlots> schemas, std::shared_ptr<PlanFacts> facts)
    : session_(std::move(session)),
      node_(std::move(node)),
      schemas_(std::move(schemas)),
      facts_(std::move(facts)),
      num_sources_(CountStreams(node_)) {
  for (const FrameNode* w : WatermarkNodes(node_)) watermarks_.push_back({w->name, w->delay_ms});
}

Status FramePlan::Open(const plan::PlanContext& context) {
  // The node the planner gets: the whole frame, or the stateful node under row
  // transformations (which then run on its output).
  NodePtr planned = node_;
  post_path_.clear();
  if (HasStatefulStreamNode(node_)) {
    while (!IsStatefulNode(planned) && !IsJoinProjection(planned)) {
      if (!IsRowTransformation(planned) || !HasStatefulStreamNode(planned->children[0])) {
        return Status::NotSupported(
            "after a streaming aggregation, deduplication, TransformWithState or stream-stream "
            "join only "
            "Select/SelectExpr/Where/WithColumn/Drop/Alias are supported (one stateful "
            "operation per query); transform the rows of each batch in ForeachBatch instead");
      }
      post_path_.push_back(planned);
      planned = planned->children[0];
    }
  }
  facts_->transformed_after_state = !post_path_.empty();
  StreamSchemas known;
  for (size_t i = 0; i < schemas_->size(); ++i) {
    if ((*schemas_)[i]) known[i] = *(*schemas_)[i];
  }
  SLUICE_ASSIGN_OR_RETURN(conn_, session_->engine->Connect());
  if (planned->kind == FrameNode::Kind::kTransformWithState) {
    SLUICE_ASSIGN_OR_RETURN(
        TransformWithStatePlan tws,
        PlanTransformWithState(session_, planned, conn_.get(), known, context.output_mode));
    compiled_ = std::move(tws.compiled);
    facts_->update_keys = std::move(tws.update_keys);
    facts_->update_single_row = false;
    inner_ = std::move(tws.plan);
    return OpenInner(context);
  }
  SLUICE_ASSIGN_OR_RETURN(
      compiled_, Compile(session_.get(), planned, conn_.get(), known, CompileMode::kStreamingPlan));

  plan::ParsedStreamingQuery parsed;
  parsed.sql = compiled_.sql;
  for (const CompiledQuery::Relation& r : compiled_.relations) {
    plan::StreamRelation relation;
    relation.alias = r.alias;
    if (r.watermark)
      relation.watermark = plan::WatermarkSpec{*r.watermark, *r.watermark, r.delay_ms};
    parsed.streams.push_back(std::move(relation));
  }
  plan::StreamingQuerySpec spec{std::move(parsed), context.output_mode};
  SLUICE_ASSIGN_OR_RETURN(plan::PlannedStreamingQuery planned_query,
                          plan::PlanStreamingQuery(context.engine, spec));
  facts_->update_keys = planned_query.update_keys;
  facts_->update_single_row = planned_query.update_single_row;
  inner_ = std::move(planned_query.plan);
  return OpenInner(context);
}

Status FramePlan::OpenInner(const plan::PlanContext& context) {
  if (compiled_.relations.size() != num_sources_) {
    return Status::Internal("the streaming DataFrame has " + std::to_string(num_sources_) +
                            " streams but compiled to " +
                            std::to_string(compiled_.relations.size()) + " stream relations");
  }
  outer_prepare_ = context.prepare_connection;
  plan::PlanContext ctx = context;
  ctx.prepare_connection = [this](engine::Connection& c) -> Status {
    if (outer_prepare_) SLUICE_RETURN_NOT_OK(outer_prepare_(c));
    return Prepare(session_.get(), compiled_, &c);
  };
  return inner_->Open(ctx);
}

Result<plan::PlanOutput> FramePlan::Execute(const plan::PlanInput& input) {
  if (inner_ == nullptr) return Status::Internal("FramePlan::Execute before Open");
  plan::PlanInput in = input;
  bool prepared = false;
  for (size_t i = 0; i < compiled_.relations.size() && i < in.sources.size(); ++i) {
    const std::string& pre = compiled_.relations[i].pre_sql;
    if (pre.empty()) continue;
    const std::string ctx = "batch " + input.batch_id.ToString() + ", stream " + std::to_string(i) +
                            " up to its WithWatermark";
    if (!prepared) {
      if (outer_prepare_) SLUICE_RETURN_NOT_OK_CTX(outer_prepare_(*conn_), ctx);
      SLUICE_RETURN_NOT_OK_CTX(Prepare(session_.get(), compiled_, conn_.get()), ctx);
      prepared = true;
    }
    SLUICE_RETURN_NOT_OK_CTX(conn_->RegisterBatch(engine::SourceTableName(i), input.sources[i]),
                             ctx);
    SLUICE_ASSIGN_OR_RETURN_CTX(in.sources[i], conn_->Query(pre), ctx);
  }
  SLUICE_ASSIGN_OR_RETURN(plan::PlanOutput out, inner_->Execute(in));
  if (post_path_.empty() || out.rows.num_columns() == 0) return out;
  const std::string ctx =
      "batch " + input.batch_id.ToString() + ": the transformations after the stateful operation";
  if (!post_) {
    SLUICE_ASSIGN_OR_RETURN_CTX(post_conn_, session_->engine->Connect(), ctx);
    SLUICE_RETURN_NOT_OK_CTX(post_conn_->RegisterBatch(kPlanOutput, out.rows), ctx);
    FrameNode leaf;
    leaf.kind = FrameNode::Kind::kSql;
    leaf.text = std::string("SELECT * FROM ") + kPlanOutput;
    NodePtr tree = std::make_shared<const FrameNode>(std::move(leaf));
    for (auto it = post_path_.rbegin(); it != post_path_.rend(); ++it) {
      FrameNode copy = **it;
      copy.children = {tree};
      tree = std::make_shared<const FrameNode>(std::move(copy));
    }
    SLUICE_ASSIGN_OR_RETURN_CTX(post_, Compile(session_.get(), tree, post_conn_.get()), ctx);
    // `window.start` names the struct column `window`, as in the planned part.
    SLUICE_ASSIGN_OR_RETURN_CTX(post_->sql, plan::RewriteWindowCalls(post_->sql), ctx);
  }
  SLUICE_RETURN_NOT_OK_CTX(post_conn_->RegisterBatch(kPlanOutput, out.rows), ctx);
  SLUICE_RETURN_NOT_OK_CTX(Prepare(session_.get(), *post_, post_conn_.get()), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(out.rows, post_conn_->Query(post_->sql), ctx);
  return out;
}

bool FramePlan::WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const {
  return inner_ != nullptr && inner_->WantsNoDataBatch(used_watermark_ms, next_watermark_ms);
}

}  // namespace sluice::api
