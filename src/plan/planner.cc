#include "plan/planner.h"

#include <algorithm>
#include <cctype>

#include "common/strings.h"
#include "engine/relation_names.h"
#include "ops/global_limit.h"
#include "ops/streaming_aggregate.h"
#include "plan/aggregate_planner.h"
#include "plan/dedup_planner.h"
#include "plan/event_time_stats.h"
#include "plan/join_planner.h"
#include "plan/stateful_plan.h"
#include "plan/supported_operations.h"

namespace sluice::plan {

std::vector<size_t> QueryAnalysis::StreamsWithWatermarkColumn(std::string_view column) const {
  std::vector<size_t> out;
  if (query == nullptr) return out;
  for (size_t i = 0; i < query->streams.size(); ++i) {
    const auto& w = query->streams[i].watermark;
    if (w && AsciiLower(w->column) == AsciiLower(column)) out.push_back(i);
  }
  return out;
}

bool QueryAnalysis::IsWatermarkedColumn(const std::vector<std::string>& names) const {
  if (names.empty()) return false;
  if (!join_watermark_columns) return !StreamsWithWatermarkColumn(names.back()).empty();
  if (names.size() != 2) return false;
  for (const auto& [alias, column] : *join_watermark_columns) {
    if (AsciiLower(alias) == AsciiLower(names[0]) && AsciiLower(column) == AsciiLower(names[1])) {
      return true;
    }
  }
  return false;
}

namespace {

// The shape flags of a SELECT node (QueryAnalysis::has_*).
void SetShape(QueryAnalysis* a) {
  a->has_aggregation = a->has_distinct = a->has_qualify = false;
  if (!IsSelectNode(a->top)) return;
  const Json& top = a->top;
  a->has_aggregation = !GroupExpressions(top).empty() || !Having(top).is_null() ||
                       ContainsAggregate(SelectList(top)) || GroupsByAll(top);
  for (const auto& m : Modifiers(top)) {
    if (NodeType(m) == "DISTINCT_MODIFIER") a->has_distinct = true;
  }
  a->has_qualify = !Qualify(top).is_null();
}

// The FROM of an upper part that reads stage k's output table, under the alias and column
// aliases of the subquery ref `from` it replaces.
Json StageTableRef(size_t k, const Json& from) {
  const Json& column_aliases = ColumnNameAliases(from);
  return MakeBaseTableRef(engine::StageTableName(k), Alias(from),
                          column_aliases.is_null() ? Json::array() : column_aliases);
}

bool IsStateful(const QueryAnalysis& a) {
  return a.has_aggregation || a.has_distinct || a.has_qualify;
}

// An analysis of `node` (a SELECT node of the same query) for planning it on its own.
Result<QueryAnalysis> AnalysisOf(const QueryAnalysis& parent, Json node, sluice::OutputMode mode) {
  QueryAnalysis a;
  a.query = parent.query;
  a.output_mode = mode;
  a.ast = parent.ast;
  a.top = std::move(node);
  SLUICE_ASSIGN_OR_RETURN(a.sql, parent.ast->ToSql(a.top));
  SetShape(&a);
  return a;
}

// A plain DISTINCT (every column), Spark's Distinct: an aggregate.
bool IsPlainDistinct(const Json& node) {
  for (const auto& m : Modifiers(node)) {
    if (NodeType(m) == "DISTINCT_MODIFIER" && DistinctOnTargets(m).empty()) {
      return true;
    }
  }
  return false;
}

// SQL's SELECT DISTINCT, as Spark plans it in every output mode: Spark's Distinct is an aggregate
// with every selected expression as a grouping key and no aggregate function (stateStoreSave). In
// APPEND mode it needs a watermarked event-time column among the selected ones (else Spark's
// "without watermark" refusal) and writes a distinct row once the watermark passes it; in UPDATE
// mode a distinct row is emitted again by every batch that holds it; in COMPLETE mode the whole
// distinct set every batch. dropDuplicates is `DISTINCT ON (...)` (the dedup planner). `SELECT
// DISTINCT *` (whose keys are the input's columns, unknown here) is not this shape: a plain `*`
// over one stream is PlanDistinctStar's; the other star forms RefuseDistinctStar refuses in
// APPEND mode, the dedup planner in the others (docs/differences.md, "Streaming differential").
bool HasStar(const Json& node) {
  for (const auto& item : SelectList(node)) {
    if (ExpressionClass(item) == "STAR") return true;
  }
  return false;
}

bool IsDistinctAggregate(const QueryAnalysis& a) {
  return !a.has_aggregation && !a.has_qualify && IsPlainDistinct(a.top) && !HasStar(a.top);
}

bool HasWatermark(const QueryAnalysis& a) {
  for (const auto& s : a.query->streams) {
    if (s.watermark.has_value()) return true;
  }
  return false;
}

// Spark's refusal of an aggregation in APPEND mode without a watermark, for a SELECT DISTINCT.
Status DistinctWithoutWatermark() {
  return Status::InvalidArgument(
      "Append output mode not supported when there are streaming aggregations on streaming "
      "DataFrames/DataSets without watermark (SQL's SELECT DISTINCT is an aggregation by every "
      "selected column; DISTINCT ON (...) is the deduplication, dropDuplicates)");
}

// `SELECT DISTINCT *` in APPEND mode that PlanDistinctStar does not take (a star with EXCLUDE /
// REPLACE, other items beside it, two streams, ORDER BY / LIMIT): Spark's Distinct aggregates
// by every input column, so it refuses the query without a watermark and otherwise writes each
// distinct row once the watermark passes it. Sluice cannot name the columns here, and the
// deduplication would write the rows at once: refused, with what to write instead.
Status RefuseDistinctStar(const QueryAnalysis& a) {
  if (a.output_mode != sluice::OutputMode::kAppend || a.has_aggregation || a.has_qualify ||
      !IsPlainDistinct(a.top) || !HasStar(a.top)) {
    return Status::OK();
  }
  if (!HasWatermark(a)) return DistinctWithoutWatermark();
  return Status::InvalidArgument(
      "SELECT DISTINCT with this * form in Append output mode is an aggregation by every input "
      "column (Spark's Distinct), which Sluice plans for a plain * over one stream or with the "
      "columns listed: write SELECT DISTINCT c1, c2, "
      "... with the watermarked event-time column among them (each distinct row is written once "
      "the watermark passes it), or DISTINCT ON (c1, c2, ...) * for a deduplication "
      "(dropDuplicates: each row at once)");
}

// The select list is one plain `*` (no EXCLUDE / REPLACE / RENAME / COLUMNS, any qualifier).
bool IsOnlyStar(const Json& node) {
  const Json& list = SelectList(node);
  if (list.size() != 1) return false;
  return IsPlainStar(list[0]);
}

// `SELECT DISTINCT * FROM <one stream> ...`: Spark's Distinct by every input column, an
// aggregation whose keys the operator takes from its input at the first batch
// (ops::StreamingAggregateOptions::keys_from_input). The input SQL is the query without
// DISTINCT; the output is the operator's (the keys under their input names). The event-time key
// is the stream's watermarked column. In UPDATE mode the sink appends each batch's rows (no
// MERGE key is known when planning; docs/streaming-sql.md "Output modes"). std::nullopt for
// another shape (ORDER BY, LIMIT, a star form, two streams).
Result<std::optional<StatefulPlanSpec>> PlanDistinctStar(const QueryAnalysis& a) {
  if (a.has_aggregation || a.has_qualify || !IsPlainDistinct(a.top) || !IsOnlyStar(a.top) ||
      a.query->streams.size() != 1 || a.join_watermark_columns) {
    return std::optional<StatefulPlanSpec>();
  }
  Json node = a.top;
  Json modifiers = Json::array();
  for (const auto& m : Modifiers(node)) {
    if (NodeType(m) != "DISTINCT_MODIFIER") return std::optional<StatefulPlanSpec>();
  }
  Modifiers(node) = std::move(modifiers);
  if (a.output_mode == sluice::OutputMode::kAppend && !HasWatermark(a)) {
    return DistinctWithoutWatermark();
  }
  StatefulPlanSpec spec;
  spec.operator_name = "stateStoreSave";
  SLUICE_ASSIGN_OR_RETURN(std::string input_sql, a.ast->ToSql(node));
  spec.input_sqls.push_back(std::move(input_sql));
  ops::StreamingAggregateOptions o;
  o.keys_from_input = true;
  const auto& watermark = a.query->streams[0].watermark;
  if (watermark) o.event_time_key = watermark->column;
  spec.op = std::make_unique<ops::StreamingAggregate>(std::move(o));
  spec.update_appends = a.output_mode == sluice::OutputMode::kUpdate;
  return std::optional<StatefulPlanSpec>(std::move(spec));
}

// `SELECT DISTINCT e1 [AS a1], ...` as `SELECT e1 [AS a1], ... GROUP BY e1, ...`.
Result<QueryAnalysis> DistinctAsGroupBy(const QueryAnalysis& a) {
  Json node = a.top;
  Json modifiers = Json::array();
  for (const auto& m : Modifiers(node)) {
    if (NodeType(m) != "DISTINCT_MODIFIER") modifiers.push_back(m);
  }
  Modifiers(node) = std::move(modifiers);
  Json keys = Json::array();
  Json set = Json::array();
  for (const auto& item : SelectList(node)) {
    Json key = item;
    SetAlias(key, "");
    set.push_back(keys.size());
    keys.push_back(std::move(key));
  }
  GroupExpressions(node) = std::move(keys);
  GroupSets(node) = Json::array({std::move(set)});
  return AnalysisOf(a, std::move(node), a.output_mode);
}

constexpr char kGlobalWatermarkMessage[] =
    "Detected pattern of possible 'correctness' issue due to global watermark. The query "
    "contains stateful operation which can emit rows older than the current watermark plus "
    "allowed late record delay, which are \"late rows\" in downstream stateful operations and "
    "these rows can be discarded. ";

Result<std::vector<StatefulPlanSpec>> PlanStages(const QueryAnalysis& analysis);

// One stateful shape at the top of `analysis` (no chain): a stream-stream join, an aggregation,
// a deduplication; std::nullopt for a stateless query.
Result<std::optional<StatefulPlanSpec>> PlanSingle(const QueryAnalysis& analysis) {
  std::optional<StatefulPlanSpec> stateful;
  if (analysis.query->streams.size() >= 2) {  // a stream-stream join needs two STREAM relations
    SLUICE_ASSIGN_OR_RETURN(stateful, PlanStreamJoin(analysis));
  }
  if (stateful && IsStateful(analysis)) {
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
  if (!stateful) {
    SLUICE_ASSIGN_OR_RETURN(stateful, PlanDistinctStar(analysis));
  }
  if (!stateful) SLUICE_RETURN_NOT_OK(RefuseDistinctStar(analysis));
  if (!stateful && IsDistinctAggregate(analysis)) {
    if (analysis.output_mode == sluice::OutputMode::kAppend && !HasWatermark(analysis)) {
      return DistinctWithoutWatermark();
    }
    SLUICE_ASSIGN_OR_RETURN(QueryAnalysis grouped, DistinctAsGroupBy(analysis));
    SLUICE_ASSIGN_OR_RETURN(auto agg, PlanAggregation(grouped));
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
  if (stateful && stateful->op == nullptr) {
    return Status::Internal("a shape planner returned no operator");
  }
  return stateful;
}

// The select-list item names of `node` (aliases, else a plain column's last name) whose
// expression reads the window / session_window column of an aggregation.
std::vector<std::string> WindowDerivedColumns(const Json& node) {
  std::vector<std::string> out;
  for (const auto& item : SelectList(node)) {
    bool from_window = false;
    VisitExpression(item, [&](const Json& e) {
      if (ExpressionClass(e) == "COLUMN_REF") {
        std::vector<std::string> names = ColumnRefNames(e);
        for (const std::string& n : names) {
          const std::string lower = AsciiLower(n);
          if (lower == "window" || lower == "session_window") from_window = true;
        }
      }
      return !from_window;
    });
    if (!from_window) continue;
    std::string name = Alias(item);
    if (name.empty() && ExpressionClass(item) == "COLUMN_REF") {
      std::vector<std::string> names = ColumnRefNames(item);
      if (!names.empty()) name = names.back();
    }
    if (!name.empty()) out.push_back(AsciiLower(name));
  }
  return out;
}

// A stateless SELECT (projection, WHERE, OVER windows, QUALIFY) whose FROM is a subquery with a
// streaming aggregation, in APPEND mode: the aggregation is planned alone and the SELECT runs
// over the rows it emits in each batch (StatefulPlanSpec::post_sql). In APPEND mode a window's
// groups are emitted together, in the batch whose watermark passes the window's end, so an
// OVER (PARTITION BY <a column of the window>) sees all of a window's rows: a per-window top-N
// is exact. OVER windows not partitioned by a window column are refused (they would see one
// batch's rows only). std::nullopt when the query does not have this shape or is not APPEND.
Result<std::optional<std::vector<StatefulPlanSpec>>> PlanStatelessOverAggregation(
    const QueryAnalysis& analysis) {
  using Stages = std::vector<StatefulPlanSpec>;
  const Json& top = analysis.top;
  if (!IsSelectNode(top) || analysis.has_aggregation || analysis.has_distinct) {
    return std::optional<Stages>();
  }
  const Json& from = FromTable(top);
  if (NodeType(from) != "SUBQUERY" || !IsSelectNode(SubqueryNode(from))) {
    return std::optional<Stages>();
  }
  const Json& node = SubqueryNode(from);
  SLUICE_ASSIGN_OR_RETURN(QueryAnalysis lower,
                          AnalysisOf(analysis, node, sluice::OutputMode::kAppend));
  if (!lower.has_aggregation) return std::optional<Stages>();
  // Only APPEND emits each group once, when final (other modes: refused as before, "below the
  // top level").
  if (analysis.output_mode != sluice::OutputMode::kAppend) return std::optional<Stages>();
  for (const auto& m : Modifiers(top)) {
    const std::string type = NodeType(m);
    if (type == "LIMIT_MODIFIER" || type == "LIMIT_PERCENT_MODIFIER") {
      return Status::InvalidArgument(
          "LIMIT and OFFSET are not supported on streaming DataFrames/Datasets yet");
    }
    if (type == "ORDER_MODIFIER") {
      return Status::InvalidArgument(
          "Sorting is not supported on streaming DataFrames/Datasets, unless it is on aggregated "
          "DataFrame/Dataset in Complete output mode");
    }
  }
  const std::vector<std::string> window_columns = WindowDerivedColumns(node);
  std::optional<Status> bad;
  for (const Json* clause : {&SelectList(top), &WhereClause(top), &Qualify(top)}) {
    if (bad) continue;
    VisitExpression(*clause, [&](const Json& e) {
      if (ExpressionClass(e) != "WINDOW") return true;
      bool by_window = false;
      for (const auto& p : WindowPartitions(e)) {
        if (ExpressionClass(p) != "COLUMN_REF") continue;
        std::vector<std::string> names = ColumnRefNames(p);
        if (names.empty()) continue;
        const std::string name = AsciiLower(names.back());
        by_window = by_window || std::find(window_columns.begin(), window_columns.end(), name) !=
                                     window_columns.end();
      }
      if (!by_window) {
        bad = Status::InvalidArgument(
            "an OVER window over the result of a streaming aggregation must be partitioned by a "
            "column of the aggregation's window (window.start, window.end, window): a window's "
            "groups are emitted together, other partitions would only see one batch's rows");
      }
      return !bad;
    });
  }
  if (bad) return *bad;
  SLUICE_ASSIGN_OR_RETURN(Stages stages, PlanStages(lower));
  if (stages.empty()) return Status::Internal("a streaming aggregation planned no operator");
  Json upper_top = top;
  FromTable(upper_top) = StageTableRef(stages.size() - 1, from);
  SLUICE_ASSIGN_OR_RETURN(stages.back().post_sql, analysis.ast->ToSql(upper_top));
  if (stages.size() == 1) {  // a per-window top-1: the aggregation keeps only its candidates
    SLUICE_RETURN_NOT_OK(HintTopOneOverAggregation(lower, top, &stages.back()));
  }
  return std::optional<Stages>(std::move(stages));
}

// A chain: a stateful top SELECT whose FROM is a stateful subquery (deduplication, say) or a
// stream-stream join. The lower part is planned first (recursively); the top then reads its
// output table. std::nullopt when the query is not a chain.
Result<std::optional<std::vector<StatefulPlanSpec>>> PlanChain(const QueryAnalysis& analysis) {
  using Stages = std::vector<StatefulPlanSpec>;
  SLUICE_ASSIGN_OR_RETURN(std::optional<Stages> over_aggregation,
                          PlanStatelessOverAggregation(analysis));
  if (over_aggregation) return over_aggregation;
  if (!IsSelectNode(analysis.top) || !IsStateful(analysis)) {
    return std::optional<Stages>();
  }
  const Json& from = FromTable(analysis.top);
  const std::string upper_kind = analysis.has_aggregation ? "an aggregation" : "a deduplication";

  // ---- (SELECT ... stateful ...) AS s: plan the subquery, then the top over its output. ----
  if (NodeType(from) == "SUBQUERY" && IsSelectNode(SubqueryNode(from))) {
    const Json& node = SubqueryNode(from);
    // The subquery's rows feed another operator: planned as append (each row once).
    SLUICE_ASSIGN_OR_RETURN(QueryAnalysis lower,
                            AnalysisOf(analysis, node, sluice::OutputMode::kAppend));
    if (!IsStateful(lower)) return std::optional<Stages>();
    const bool update_or_complete = analysis.output_mode != sluice::OutputMode::kAppend;
    if (lower.has_aggregation || IsPlainDistinct(node)) {
      if (update_or_complete) {
        // Spark's UnsupportedOperationChecker.checkStreamingQueryGlobalWatermarkLimit.
        return Status::InvalidArgument(
            std::string(kGlobalWatermarkMessage) +
            "Here: " + (lower.has_aggregation ? "a streaming aggregation" : "a SELECT DISTINCT") +
            " in a subquery feeds " + upper_kind + " in " +
            (analysis.output_mode == sluice::OutputMode::kUpdate ? "Update" : "Complete") +
            " output mode, where it emits updated rows again. Use OUTPUT MODE APPEND, or DISTINCT "
            "ON (...) / QUALIFY row_number() ... = 1 for the deduplication");
      }
      if (lower.has_aggregation) {
        return Status::InvalidArgument(
            "a streaming aggregation followed by another stateful operator (" + upper_kind +
            " over its result) is not supported yet");
      }
      // SQL's SELECT DISTINCT is an aggregation (Spark's Distinct) in append mode too.
      if (!HasWatermark(lower)) return DistinctWithoutWatermark();
      return Status::InvalidArgument(
          "a streaming aggregation followed by another stateful operator (" + upper_kind +
          " over the result of a SELECT DISTINCT, which is an aggregation) is not supported yet; "
          "DISTINCT ON (...) is the deduplication that an aggregation may read");
    }
    if (!analysis.has_aggregation) {
      return Status::InvalidArgument(
          "a deduplication followed by another deduplication is not supported yet; only an "
          "aggregation may read a deduplicating subquery");
    }
    SLUICE_ASSIGN_OR_RETURN(Stages stages, PlanStages(lower));
    if (stages.empty()) return Status::Internal("a stateful subquery planned no operator");
    Json upper_top = analysis.top;
    FromTable(upper_top) = StageTableRef(stages.size() - 1, from);
    SLUICE_ASSIGN_OR_RETURN(QueryAnalysis upper,
                            AnalysisOf(analysis, std::move(upper_top), analysis.output_mode));
    SLUICE_RETURN_NOT_OK(CheckSupportedOperations(upper));
    SLUICE_ASSIGN_OR_RETURN(std::optional<StatefulPlanSpec> top, PlanSingle(upper));
    if (!top) return Status::Internal("the top of a chain planned no operator");
    stages.push_back(std::move(*top));
    return std::optional<Stages>(std::move(stages));
  }

  // ---- A stream-stream join, then an aggregation. ----
  if (analysis.query->streams.size() < 2) return std::optional<Stages>();
  if (NodeType(from) != "JOIN") return std::optional<Stages>();
  SLUICE_RETURN_NOT_OK(CheckSupportedOperations(analysis));
  // The join's rows feed the aggregation: the join runs as in append (each row once), the
  // aggregation in the query's mode (Spark 4.2 runs a join feeding an aggregation in Update mode,
  // with watermarks too: the differential's join_*then_count_update). Complete mode is not
  // checked against Spark: refused as before.
  if (analysis.has_aggregation && analysis.output_mode == sluice::OutputMode::kComplete) {
    return Status::InvalidArgument(
        "Join between two streaming DataFrames/Datasets is not supported in Complete output mode, "
        "only in Append output mode");
  }
  QueryAnalysis join_part = analysis;
  join_part.output_mode = sluice::OutputMode::kAppend;
  SLUICE_ASSIGN_OR_RETURN(std::optional<StreamJoinBelow> below,
                          PlanStreamJoinBelow(join_part, StreamingPlan::StageTableName(0)));
  if (!below) return std::optional<Stages>();
  if (!analysis.has_aggregation) {
    return Status::InvalidArgument(
        "deduplication (DISTINCT / QUALIFY) of a stream-stream join is not supported yet (two "
        "stateful operators); an aggregation over the join is");
  }
  SLUICE_ASSIGN_OR_RETURN(QueryAnalysis upper,
                          AnalysisOf(analysis, std::move(below->upper), analysis.output_mode));
  upper.join_watermark_columns = std::move(below->watermark_columns);
  SLUICE_RETURN_NOT_OK(CheckSupportedOperations(upper));
  SLUICE_ASSIGN_OR_RETURN(std::optional<StatefulPlanSpec> top, PlanSingle(upper));
  if (!top) return Status::Internal("the aggregation over a join planned no operator");
  Stages stages;
  stages.push_back(std::move(below->join));
  stages.push_back(std::move(*top));
  return std::optional<Stages>(std::move(stages));
}

// `... LIMIT n` at the top of an APPEND query whose rest is stateless: Spark's
// StreamingGlobalLimitExec (ops/global_limit.h), the first n rows over all batches. Other LIMITs
// (OFFSET, UPDATE mode, over a stateful operator, in a subquery) are not this shape (nullopt) and
// are refused by CheckSupportedOperations as before.
Result<std::optional<StatefulPlanSpec>> PlanGlobalLimit(const QueryAnalysis& analysis) {
  const Json& top = analysis.top;
  if (analysis.output_mode != sluice::OutputMode::kAppend || !IsSelectNode(top)) {
    return std::optional<StatefulPlanSpec>();
  }
  const Json* limit = nullptr;
  Json rest_modifiers = Json::array();
  for (const auto& m : Modifiers(top)) {
    if (NodeType(m) == "LIMIT_MODIFIER") {
      limit = &m;
    } else {
      rest_modifiers.push_back(m);
    }
  }
  if (limit == nullptr || !LimitOffset(*limit).is_null()) {
    return std::optional<StatefulPlanSpec>();
  }
  const std::optional<int64_t> n = IntegerConstant(LimitCount(*limit));
  if (!n || *n < 0) {
    return Status::InvalidArgument(
        "LIMIT of a streaming query takes a constant row count >= 0 (LIMIT n)");
  }
  Json node = top;
  Modifiers(node) = std::move(rest_modifiers);
  SLUICE_ASSIGN_OR_RETURN(QueryAnalysis rest,
                          AnalysisOf(analysis, std::move(node), sluice::OutputMode::kAppend));
  if (IsStateful(rest) || analysis.query->streams.size() >= 2) {
    return std::optional<StatefulPlanSpec>();  // a limit over a stateful operator: not yet
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<StatefulPlanSpec> below, PlanStages(rest));
  if (!below.empty()) return std::optional<StatefulPlanSpec>();
  StatefulPlanSpec spec;
  spec.operator_name = ops::kGlobalLimitOperatorName;
  spec.input_sqls.push_back(rest.sql);
  spec.op = std::make_unique<ops::GlobalLimit>(ops::GlobalLimitOptions{*n});
  return std::optional<StatefulPlanSpec>(std::move(spec));
}

// The stateful operators of `analysis`, bottom first (empty: stateless). Checks the supported
// operations of each part.
Result<std::vector<StatefulPlanSpec>> PlanStages(const QueryAnalysis& analysis) {
  SLUICE_ASSIGN_OR_RETURN(std::optional<StatefulPlanSpec> limit, PlanGlobalLimit(analysis));
  if (limit) {
    std::vector<StatefulPlanSpec> out;
    out.push_back(std::move(*limit));
    return out;
  }
  SLUICE_ASSIGN_OR_RETURN(auto chain, PlanChain(analysis));
  if (chain) return std::move(*chain);
  SLUICE_RETURN_NOT_OK(CheckSupportedOperations(analysis));
  SLUICE_ASSIGN_OR_RETURN(auto single, PlanSingle(analysis));
  std::vector<StatefulPlanSpec> out;
  if (single) out.push_back(std::move(*single));
  return out;
}

}  // namespace

Result<PlannedStreamingQuery> PlanStreamingQuery(engine::Engine* engine,
                                                 const StreamingQuerySpec& spec) {
  SLUICE_ASSIGN_OR_RETURN(auto ast, SqlAst::Open(engine));
  QueryAnalysis analysis;
  analysis.query = &spec.query;
  analysis.output_mode = spec.output_mode;
  analysis.ast = ast.get();
  SLUICE_ASSIGN_OR_RETURN(analysis.sql, RewriteWindowCalls(spec.query.sql));
  SLUICE_ASSIGN_OR_RETURN(analysis.top, ast->ParseSelect(analysis.sql));
  SetShape(&analysis);
  std::vector<StatsFilters> stats = FindStatsFilters(spec.query, analysis.top, *ast);

  PlannedStreamingQuery out;
  SLUICE_ASSIGN_OR_RETURN(std::vector<StatefulPlanSpec> stages, PlanStages(analysis));
  if (stages.empty()) {
    SLUICE_RETURN_NOT_OK(CheckStatelessOutputMode(analysis));
    out.plan = StreamingPlan::Stateless(spec.query, analysis.sql, std::move(stats));
    return out;
  }
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
    out.operators.push_back(it->operator_name);  // top-down, as operator ids
  }
  if (spec.output_mode == sluice::OutputMode::kUpdate) out.update_keys = stages.back().update_keys;
  // Every other UPDATE aggregation has MERGE keys (the output columns carry its grouping keys)
  // or appends (they do not), so an aggregation on top without keys that does not append is a
  // global one.
  out.update_single_row = spec.output_mode == sluice::OutputMode::kUpdate &&
                          out.update_keys.empty() && !stages.back().update_appends &&
                          out.operators.front() == "stateStoreSave";
  out.plan = StreamingPlan::Chain(spec.query, std::move(stages), std::move(stats));
  return out;
}

}  // namespace sluice::plan
