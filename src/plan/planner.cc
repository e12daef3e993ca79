#include "plan/planner.h"

#include <algorithm>
#include <cctype>

#include "common/strings.h"
#include "plan/aggregate_planner.h"
#include "plan/dedup_planner.h"
#include "plan/event_time_stats.h"
#include "plan/join_planner.h"
#include "plan/stateful_plan.h"
#include "plan/supported_operations.h"

namespace sluice::plan {
namespace {}  // namespace

std::vector<size_t> QueryAnalysis::StreamsWithWatermarkColumn(std::string_view column) const {
  std::vector<size_t> out;
  if (query == nullptr) return out;
  for (size_t i = 0; i < query->streams.size(); ++i) {
    const auto& w = query->streams[i].watermark;
    if (w && AsciiLower(w->column) == AsciiLower(column)) out.push_back(i);
  }
  return out;
}

Result<PlannedStreamingQuery> PlanStreamingQuery(engine::Engine* engine,
                                                 const StreamingQuerySpec& spec) {
  SLUICE_ASSIGN_OR_RETURN(auto ast, SqlAst::Open(engine));
  QueryAnalysis analysis;
  analysis.query = &spec.query;
  analysis.output_mode = spec.output_mode;
  analysis.ast = ast.get();
  SLUICE_ASSIGN_OR_RETURN(analysis.sql, RewriteWindowCalls(spec.query.sql));
  SLUICE_ASSIGN_OR_RETURN(analysis.top, ast->ParseSelect(analysis.sql));
  if (analysis.top.value("type", "") == "SELECT_NODE") {
    const Json& top = analysis.top;
    analysis.has_aggregation = !top["group_expressions"].empty() || !top["having"].is_null() ||
                               ContainsAggregate(top["select_list"]) ||
                               top.value("aggregate_handling", "") == "FORCE_AGGREGATES";
    for (const auto& m : top["modifiers"]) {
      if (m.value("type", "") == "DISTINCT_MODIFIER") analysis.has_distinct = true;
    }
    analysis.has_qualify = !top["qualify"].is_null();
  }
  SLUICE_RETURN_NOT_OK(CheckSupportedOperations(analysis));
  std::vector<StatsFilters> stats = FindStatsFilters(spec.query, analysis.top, *ast);

  PlannedStreamingQuery out;
  std::optional<StatefulPlanSpec> stateful;
  if (spec.query.streams.size() >= 2) {  // a stream-stream join needs two STREAM relations
    SLUICE_ASSIGN_OR_RETURN(stateful, PlanStreamJoin(analysis));
  }
  if (stateful && (analysis.has_aggregation || analysis.has_distinct || analysis.has_qualify)) {
    return Status::InvalidArgument(
        "a stream-stream join followed by an aggregation or deduplication in the same query is "
        "not supported yet (two stateful operators)");
  }
  if (!stateful && analysis.has_aggregation) {
    if (analysis.has_distinct || analysis.has_qualify) {
      return Status::InvalidArgument(
          "DISTINCT or QUALIFY together with a streaming aggregation is not supported yet (two "
          "stateful operators)");
    }
    SLUICE_ASSIGN_OR_RETURN(auto agg, PlanAggregation(analysis));
    stateful.emplace(std::move(agg));
  }
  if (!stateful && (analysis.has_distinct || analysis.has_qualify)) {
    SLUICE_ASSIGN_OR_RETURN(auto dedup, PlanDeduplication(analysis));
    if (!dedup) {
      return Status::InvalidArgument(
          "this DISTINCT / QUALIFY form is not supported on streaming queries yet");
    }
    stateful = std::move(dedup);
  }
  if (!stateful) {
    SLUICE_RETURN_NOT_OK(CheckStatelessOutputMode(analysis));
    out.plan = StreamingPlan::Stateless(spec.query, analysis.sql, std::move(stats));
    return out;
  }
  if (stateful->op == nullptr) return Status::Internal("a shape planner returned no operator");
  out.operators.push_back(stateful->operator_name);
  if (spec.output_mode == sinks::OutputMode::kUpdate) out.update_keys = stateful->update_keys;
  out.plan = StreamingPlan::Stateful(spec.query, std::move(*stateful), std::move(stats));
  return out;
}

}  // namespace sluice::plan
