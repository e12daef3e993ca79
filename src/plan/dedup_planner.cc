// The deduplication shape planner (dedup_planner.h, docs/streaming-plan.md §2):
//
//   SELECT DISTINCT ...                                  ops::Deduplicate on every output column
//       (reached from the planner only as `SELECT DISTINCT *` in UPDATE mode, which is refused:
//       SQL's SELECT DISTINCT with its columns listed is Spark's Distinct, an aggregation,
//       planner.cc IsDistinctAggregate; dropDuplicates is DISTINCT ON (...))
//   SELECT DISTINCT ON (k, ...) ... [ORDER BY o]         ops::Deduplicate on k, ...; o picks the
//                                                        first row within a batch
//   ... QUALIFY row_number() OVER (PARTITION BY k, ... ORDER BY c) = 1
//       c the watermarked event-time column:             ops::DeduplicateWithinWatermark on k, ...
//       otherwise:                                       ops::Deduplicate on k, ...
//
// Input SQL: the query without DISTINCT / ORDER BY / QUALIFY. Keys that are not the whole row,
// ORDER BY expressions and the event-time column are added to its select list as hidden columns
// (__sluice_dedup_key_<i>, __sluice_dedup_order_<i>); the output SQL removes them, so the sink
// gets the query's columns in the query's order.
#include "plan/dedup_planner.h"

#include <algorithm>
#include <cctype>
#include <thread>

#include "common/strings.h"
#include "engine/relation_names.h"
#include "ops/deduplicate.h"

namespace sluice::plan {
namespace {

constexpr char kKeyPrefix[] = "__sluice_dedup_key_";
constexpr char kOrderPrefix[] = "__sluice_dedup_order_";

// True when the FROM clause joins two relations that both read a stream.
bool JoinsStreams(const Json& from) {
  if (NodeType(from) != "JOIN") return false;
  if (ReadsStream(JoinLeft(from)) && ReadsStream(JoinRight(from))) return true;
  return JoinsStreams(JoinLeft(from)) || JoinsStreams(JoinRight(from));
}

// The watermarked stream column that `expr` names (a plain column reference), if any.
const StreamRelation* WatermarkedColumn(const QueryAnalysis& a, const Json& expr) {
  std::vector<std::string> names = ColumnRefNames(expr);
  if (names.empty()) return nullptr;
  std::vector<size_t> streams = a.StreamsWithWatermarkColumn(names.back());
  if (streams.empty()) return nullptr;
  if (names.size() >= 2) {  // qualified: the qualifier must be that stream's alias
    for (size_t i : streams) {
      if (AsciiLower(a.query->streams[i].alias) == AsciiLower(names[names.size() - 2])) {
        return &a.query->streams[i];
      }
    }
    return nullptr;
  }
  return &a.query->streams[streams.front()];
}

// The output name of the select list item that is the watermarked event-time column, or "".
// A star (unqualified or qualified by the stream's alias) carries the column under its name.
std::string EventTimeOutputName(const QueryAnalysis& a, const Json& select_list) {
  for (const Json& item : select_list) {
    const std::string cls = ExpressionClass(item);
    if (cls == "STAR") {
      if (StarHasMoreThanExclude(item)) continue;  // be conservative with the rarer star forms
      const std::string relation = AsciiLower(StarRelation(item));
      for (const StreamRelation& s : a.query->streams) {
        if (!s.watermark) continue;
        if (!relation.empty() && relation != AsciiLower(s.alias)) continue;
        bool excluded = false;
        for (const Json& e : StarExcludeList(item)) {
          if (e.is_string() &&
              AsciiLower(e.get<std::string>()) == AsciiLower(s.watermark->column)) {
            excluded = true;
          }
        }
        if (!excluded) return s.watermark->column;
      }
      continue;
    }
    if (WatermarkedColumn(a, item) != nullptr) {
      std::string alias = Alias(item);
      return alias.empty() ? ColumnRefNames(item).back() : alias;
    }
  }
  return "";
}

// "ASC NULLS FIRST" etc. for an ORDER BY item of DuckDB's tree.
std::string OrderSuffix(const Json& order) {
  std::string type = OrderType(order);
  std::string nulls = OrderNullOrder(order);
  std::string out = type == "DESCENDING" ? " DESC" : " ASC";
  // DuckDB 1.4 writes "NULLS FIRST" / "NULLS LAST" (sql_ast_test.cc GoldenModifiers pins it).
  if (nulls == "NULLS FIRST" || nulls == "NULLS_FIRST" || nulls == "NULLS_FIRST_ORDER") {
    out += " NULLS FIRST";
  }
  if (nulls == "NULLS LAST" || nulls == "NULLS_LAST" || nulls == "NULLS_LAST_ORDER") {
    out += " NULLS LAST";
  }
  return out;
}

// The `row_number() OVER (...)` of `QUALIFY row_number() OVER (...) = 1`, or an error.
Result<Json> RowNumberWindow(const Json& qualify) {
  const Status refused = Status::InvalidArgument(
      "QUALIFY on a streaming query is supported only as deduplication: QUALIFY row_number() "
      "OVER (PARTITION BY key, ... ORDER BY column) = 1");
  if (NodeType(qualify) != "COMPARE_EQUAL") return refused;
  auto is_one = [](const Json& e) { return IntegerConstant(e) == 1; };
  auto is_row_number = [](const Json& e) {
    return ExpressionClass(e) == "WINDOW" && NodeType(e) == "WINDOW_ROW_NUMBER";
  };
  Json window;
  const Json& left = ComparisonLeft(qualify);
  const Json& right = ComparisonRight(qualify);
  if (is_row_number(left) && is_one(right)) {
    window = left;
  } else if (is_row_number(right) && is_one(left)) {
    window = right;
  } else {
    return refused;
  }
  if (WindowPartitions(window).empty()) {
    return Status::InvalidArgument(
        "QUALIFY row_number() OVER (...) = 1 on a streaming query needs PARTITION BY (the "
        "deduplication key)");
  }
  if (!WindowFilter(window).is_null()) return refused;
  return window;
}

// True when an OVER window appears in the select list (the QUALIFY's is allowed).
bool SelectListHasWindow(const Json& select_list) {
  bool found = false;
  VisitExpression(select_list, [&](const Json& e) {
    if (ExpressionClass(e) == "WINDOW") found = true;
    return !found;
  });
  return found;
}

Json WithAlias(Json expr, const std::string& alias) {
  SetAlias(expr, alias);
  return expr;
}

int Parallelism() {
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp<unsigned>(hw, 1, 4));
}

// ---- PlanDeduplication's phases ----

// What the query asks to deduplicate: read from its tree by ReadDedupShape.
struct DedupShape {
  Json input;                     // the query without DISTINCT / ORDER BY / QUALIFY
  std::vector<Json> keys;         // key expressions; empty: the whole output row (plain DISTINCT)
  Json orders;                    // ORDER BY items (DuckDB's tree) choosing the first row of a key
  bool within_watermark = false;  // QUALIFY ordered by the watermarked event-time column
  const StreamRelation* event_time_stream = nullptr;  // that column's stream
};

// Phase 1: the shapes no deduplication here plans (Spark's refusals and Sluice's "not yet").
Status RefuseUnsupportedDedup(const QueryAnalysis& analysis) {
  const Json& top = analysis.top;
  if (analysis.has_aggregation) {
    return Status::InvalidArgument(
        "DISTINCT or QUALIFY together with a streaming aggregation is not supported yet (two "
        "stateful operators)");
  }
  if (analysis.has_distinct && analysis.has_qualify) {
    return Status::InvalidArgument(
        "DISTINCT together with QUALIFY on a streaming query is not supported yet (two "
        "deduplications)");
  }
  if (JoinsStreams(FromTable(top))) {
    return Status::InvalidArgument(
        "deduplication (DISTINCT / QUALIFY) of a stream-stream join is not supported yet (two "
        "stateful operators)");
  }
  if (analysis.output_mode == sluice::OutputMode::kComplete) {
    return Status::InvalidArgument(
        "Complete output mode not supported when there are no streaming aggregations on "
        "streaming DataFrames/Datasets");
  }
  if (SelectListHasWindow(SelectList(top))) {
    return Status::InvalidArgument(
        "Non-time-based windows are not supported on streaming DataFrames/Datasets (OVER ...)");
  }
  return Status::OK();
}

// Phase 2: the keys, the ORDER BY and the input query of DISTINCT [ON] or QUALIFY.
Result<DedupShape> ReadDedupShape(const QueryAnalysis& analysis) {
  const Json& top = analysis.top;
  DedupShape shape;
  shape.input = top;
  shape.orders = Json::array();
  Json distinct_on = Json::array();
  Json modifiers = Json::array();
  for (const Json& m : Modifiers(top)) {
    if (NodeType(m) == "DISTINCT_MODIFIER") distinct_on = DistinctOnTargets(m);
  }
  for (const Json& m : Modifiers(top)) {
    const std::string type = NodeType(m);
    if (type == "DISTINCT_MODIFIER") continue;
    if (type == "ORDER_MODIFIER") {
      // Only DISTINCT ON has a choice to make; anywhere else ORDER BY sorts a stream.
      if (!analysis.has_distinct || distinct_on.empty()) {
        return Status::InvalidArgument(
            "Sorting is not supported on streaming DataFrames/Datasets, unless it is on "
            "aggregated DataFrame/Dataset in Complete output mode");
      }
      shape.orders = ModifierOrders(m);
      continue;
    }
    modifiers.push_back(m);
  }
  Modifiers(shape.input) = modifiers;
  Qualify(shape.input) = nullptr;
  if (analysis.has_qualify) {
    SLUICE_ASSIGN_OR_RETURN(Json window, RowNumberWindow(Qualify(top)));
    for (const Json& p : WindowPartitions(window)) shape.keys.push_back(p);
    shape.orders = WindowOrders(window);
    if (shape.orders.size() == 1) {
      shape.event_time_stream = WatermarkedColumn(analysis, OrderExpression(shape.orders[0]));
      shape.within_watermark = shape.event_time_stream != nullptr;
    }
  } else {
    for (const Json& k : distinct_on) shape.keys.push_back(k);
  }
  return shape;
}

// Phase 3: the keys (not the whole row) and ORDER BY expressions as hidden columns of the input
// (options' key columns, descriptions and order_by); returns the hidden names.
Result<std::vector<std::string>> AddHiddenColumns(const QueryAnalysis& analysis, DedupShape* shape,
                                                  ops::DeduplicateOptions* options) {
  std::vector<std::string> hidden;
  Json& select_list = SelectList(shape->input);
  for (size_t i = 0; i < shape->keys.size(); ++i) {
    const std::string name = kKeyPrefix + std::to_string(i);
    select_list.push_back(WithAlias(shape->keys[i], name));
    hidden.push_back(name);
    options->key_columns.push_back(name);
    SLUICE_ASSIGN_OR_RETURN(std::string key_sql,
                            analysis.ast->ExpressionToSql(WithoutAlias(shape->keys[i])));
    options->key_descriptions.push_back(std::move(key_sql));
  }
  std::string order_by;
  for (size_t i = 0; i < shape->orders.size(); ++i) {
    const std::string name = kOrderPrefix + std::to_string(i);
    select_list.push_back(WithAlias(OrderExpression(shape->orders[i]), name));
    hidden.push_back(name);
    if (!order_by.empty()) order_by += ", ";
    order_by += QuoteIdentifier(name) + OrderSuffix(shape->orders[i]);
  }
  options->order_by = order_by;
  return hidden;
}

// Phase 4: the event-time column the operator sees: for dedup within the watermark the ORDER BY
// column; for dedup a key that is the event-time column (then state is evicted), else the
// output column that carries it (late rows are dropped, state is kept).
void ChooseEventTimeColumn(const QueryAnalysis& analysis, const DedupShape& shape,
                           ops::DeduplicateOptions* options) {
  if (shape.within_watermark) {
    options->event_time_column = std::string(kOrderPrefix) + "0";
    options->delay_ms = shape.event_time_stream->watermark->delay_ms;
    return;
  }
  for (size_t i = 0; i < shape.keys.size() && options->event_time_column.empty(); ++i) {
    if (WatermarkedColumn(analysis, shape.keys[i]) != nullptr) {
      options->event_time_column = options->key_columns[i];
    }
  }
  if (options->event_time_column.empty()) {
    options->event_time_column = EventTimeOutputName(analysis, SelectList(analysis.top));
  }
}

// Phase 5: UPDATE mode upserts by the deduplication key: the output columns that are the keys
// (every output column for a plain DISTINCT), or an error when one is not among them.
Result<std::vector<std::string>> DedupUpdateKeys(const Json& select_list,
                                                 const std::vector<Json>& keys) {
  std::vector<std::string> update_keys;
  auto output_name = [&](const Json& key) -> std::string {
    for (const Json& item : select_list) {
      if (ExpressionClass(item) == "STAR") continue;
      if (SameExpression(item, key)) {
        std::string alias = Alias(item);
        if (!alias.empty()) return alias;
        std::vector<std::string> names = ColumnRefNames(item);
        if (!names.empty()) return names.back();
      }
    }
    return "";
  };
  if (keys.empty()) {
    for (const Json& item : select_list) {
      std::string name = Alias(item);
      if (name.empty() && !ColumnRefNames(item).empty()) name = ColumnRefNames(item).back();
      if (name.empty()) {
        return Status::InvalidArgument(
            "UPDATE output mode with SELECT DISTINCT needs every output column named (a column "
            "or an alias, no *): the columns are the upsert key");
      }
      update_keys.push_back(name);
    }
    return update_keys;
  }
  for (const Json& k : keys) {
    std::string name = output_name(k);
    if (name.empty()) {
      return Status::InvalidArgument(
          "UPDATE output mode with deduplication needs each deduplication key among the "
          "output columns (the upsert key)");
    }
    update_keys.push_back(name);
  }
  return update_keys;
}

}  // namespace

Result<std::optional<StatefulPlanSpec>> PlanDeduplication(const QueryAnalysis& analysis) {
  if (!analysis.has_distinct && !analysis.has_qualify) return std::optional<StatefulPlanSpec>();
  if (!IsSelectNode(analysis.top) || analysis.query == nullptr || analysis.ast == nullptr) {
    return std::optional<StatefulPlanSpec>();
  }
  SLUICE_RETURN_NOT_OK(RefuseUnsupportedDedup(analysis));
  SLUICE_ASSIGN_OR_RETURN(DedupShape shape, ReadDedupShape(analysis));

  ops::DeduplicateOptions options;
  options.parallelism = Parallelism();
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> hidden,
                          AddHiddenColumns(analysis, &shape, &options));
  ChooseEventTimeColumn(analysis, shape, &options);

  StatefulPlanSpec spec;
  SLUICE_ASSIGN_OR_RETURN(std::string input_sql, analysis.ast->ToSql(shape.input));
  spec.input_sqls.push_back(std::move(input_sql));
  if (!hidden.empty()) {
    std::string exclude;
    for (const std::string& h : hidden)
      exclude += (exclude.empty() ? "" : ", ") + QuoteIdentifier(h);
    spec.output_sql =
        "SELECT * EXCLUDE (" + exclude + ") FROM " + std::string(engine::kOperatorOutputTable);
  }
  if (analysis.output_mode == sluice::OutputMode::kUpdate) {
    SLUICE_ASSIGN_OR_RETURN(spec.update_keys,
                            DedupUpdateKeys(SelectList(analysis.top), shape.keys));
  }
  if (shape.within_watermark) {
    spec.operator_name = ops::kDedupeWithinWatermarkOperatorName;
    spec.op = std::make_unique<ops::DeduplicateWithinWatermark>(std::move(options));
  } else {
    spec.operator_name = ops::kDedupeOperatorName;
    spec.op = std::make_unique<ops::Deduplicate>(std::move(options));
  }
  return std::optional<StatefulPlanSpec>(std::move(spec));
}

}  // namespace sluice::plan
