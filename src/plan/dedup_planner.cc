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
#include "ops/deduplicate.h"

namespace sluice::plan {
namespace {

constexpr char kKeyPrefix[] = "__sluice_dedup_key_";
constexpr char kOrderPrefix[] = "__sluice_dedup_order_";

bool MentionsStream(const Json& j) { return j.dump().find("__stream_") != std::string::npos; }

// True when the FROM clause joins two relations that both read a stream.
bool JoinsStreams(const Json& from) {
  if (!from.is_object() || from.value("type", "") != "JOIN") return false;
  if (MentionsStream(from["left"]) && MentionsStream(from["right"])) return true;
  return JoinsStreams(from["left"]) || JoinsStreams(from["right"]);
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
    const std::string cls = item.value("class", "");
    if (cls == "STAR") {
      if (!item["expr"].is_null() || item.value("columns", false)) continue;
      const std::string relation = AsciiLower(item.value("relation_name", ""));
      for (const StreamRelation& s : a.query->streams) {
        if (!s.watermark) continue;
        if (!relation.empty() && relation != AsciiLower(s.alias)) continue;
        bool excluded = false;
        for (const Json& e : item["exclude_list"]) {
          if (e.is_string() &&
              AsciiLower(e.get<std::string>()) == AsciiLower(s.watermark->column)) {
            excluded = true;
          }
        }
        if (!item["qualified_exclude_list"].empty() || !item["replace_list"].empty() ||
            !item["rename_list"].empty()) {
          excluded = true;  // be conservative with the rarer star forms
        }
        if (!excluded) return s.watermark->column;
      }
      continue;
    }
    if (WatermarkedColumn(a, item) != nullptr) {
      std::string alias = item.value("alias", "");
      return alias.empty() ? ColumnRefNames(item).back() : alias;
    }
  }
  return "";
}

// "ASC NULLS FIRST" etc. for an ORDER BY item of DuckDB's tree.
std::string OrderSuffix(const Json& order) {
  std::string type = order.value("type", "ORDER_DEFAULT");
  std::string nulls = order.value("null_order", "ORDER_DEFAULT");
  std::string out = type == "DESCENDING" ? " DESC" : " ASC";
  if (nulls == "NULLS_FIRST" || nulls == "NULLS_FIRST_ORDER") out += " NULLS FIRST";
  if (nulls == "NULLS_LAST" || nulls == "NULLS_LAST_ORDER") out += " NULLS LAST";
  return out;
}

// The `row_number() OVER (...)` of `QUALIFY row_number() OVER (...) = 1`, or an error.
Result<Json> RowNumberWindow(const Json& qualify) {
  const Status refused = Status::InvalidArgument(
      "QUALIFY on a streaming query is supported only as deduplication: QUALIFY row_number() "
      "OVER (PARTITION BY key, ... ORDER BY column) = 1");
  if (qualify.value("type", "") != "COMPARE_EQUAL") return refused;
  auto is_one = [](const Json& e) {
    return e.value("class", "") == "CONSTANT" && e["value"].value("is_null", true) == false &&
           e["value"].contains("value") && e["value"]["value"].is_number_integer() &&
           e["value"]["value"].get<int64_t>() == 1;
  };
  auto is_row_number = [](const Json& e) {
    return e.value("class", "") == "WINDOW" && e.value("type", "") == "WINDOW_ROW_NUMBER";
  };
  Json window;
  if (is_row_number(qualify["left"]) && is_one(qualify["right"])) {
    window = qualify["left"];
  } else if (is_row_number(qualify["right"]) && is_one(qualify["left"])) {
    window = qualify["right"];
  } else {
    return refused;
  }
  if (window["partitions"].empty()) {
    return Status::InvalidArgument(
        "QUALIFY row_number() OVER (...) = 1 on a streaming query needs PARTITION BY (the "
        "deduplication key)");
  }
  if (!window["filter_expr"].is_null()) return refused;
  return window;
}

// True when an OVER window appears in the select list (the QUALIFY's is allowed).
bool SelectListHasWindow(const Json& select_list) {
  bool found = false;
  VisitExpression(select_list, [&](const Json& e) {
    if (e.value("class", "") == "WINDOW") found = true;
    return !found;
  });
  return found;
}

Json WithAlias(Json expr, const std::string& alias) {
  expr["alias"] = alias;
  return expr;
}

int Parallelism() {
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp<unsigned>(hw, 1, 4));
}

}  // namespace

Result<std::optional<StatefulPlanSpec>> PlanDeduplication(const QueryAnalysis& analysis) {
  if (!analysis.has_distinct && !analysis.has_qualify) return std::optional<StatefulPlanSpec>();
  const Json& top = analysis.top;
  if (top.value("type", "") != "SELECT_NODE" || analysis.query == nullptr ||
      analysis.ast == nullptr) {
    return std::optional<StatefulPlanSpec>();
  }
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
  if (JoinsStreams(top["from_table"])) {
    return Status::InvalidArgument(
        "deduplication (DISTINCT / QUALIFY) of a stream-stream join is not supported yet (two "
        "stateful operators)");
  }
  if (analysis.output_mode == sinks::OutputMode::kComplete) {
    return Status::InvalidArgument(
        "Complete output mode not supported when there are no streaming aggregations on "
        "streaming DataFrames/Datasets");
  }
  if (SelectListHasWindow(top["select_list"])) {
    return Status::InvalidArgument(
        "Non-time-based windows are not supported on streaming DataFrames/Datasets (OVER ...)");
  }

  Json input = top;
  Json distinct_on = Json::array();
  Json orders = Json::array();  // ORDER BY items (DuckDB's tree) choosing the first row
  Json modifiers = Json::array();
  for (const Json& m : top["modifiers"]) {
    if (m.value("type", "") == "DISTINCT_MODIFIER") distinct_on = m["distinct_on_targets"];
  }
  for (const Json& m : top["modifiers"]) {
    const std::string type = m.value("type", "");
    if (type == "DISTINCT_MODIFIER") continue;
    if (type == "ORDER_MODIFIER") {
      // Only DISTINCT ON has a choice to make; anywhere else ORDER BY sorts a stream.
      if (!analysis.has_distinct || distinct_on.empty()) {
        return Status::InvalidArgument(
            "Sorting is not supported on streaming DataFrames/Datasets, unless it is on "
            "aggregated DataFrame/Dataset in Complete output mode");
      }
      orders = m["orders"];
      continue;
    }
    modifiers.push_back(m);
  }
  input["modifiers"] = modifiers;
  input["qualify"] = nullptr;

  ops::DeduplicateOptions options;
  options.parallelism = Parallelism();
  std::vector<Json> keys;  // key expressions; empty: the whole output row (plain DISTINCT)
  bool within_watermark = false;
  const StreamRelation* event_time_stream = nullptr;
  if (analysis.has_qualify) {
    SLUICE_ASSIGN_OR_RETURN(Json window, RowNumberWindow(top["qualify"]));
    for (const Json& p : window["partitions"]) keys.push_back(p);
    orders = window["orders"];
    if (orders.size() == 1) {
      event_time_stream = WatermarkedColumn(analysis, orders[0]["expression"]);
      within_watermark = event_time_stream != nullptr;
    }
  } else {
    for (const Json& k : distinct_on) keys.push_back(k);
  }

  // Hidden columns: keys, then ORDER BY expressions.
  std::vector<std::string> hidden;
  Json& select_list = input["select_list"];
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string name = kKeyPrefix + std::to_string(i);
    select_list.push_back(WithAlias(keys[i], name));
    hidden.push_back(name);
    options.key_columns.push_back(name);
    Json described = keys[i];
    described.erase("alias");
    SLUICE_ASSIGN_OR_RETURN(std::string key_sql, analysis.ast->ExpressionToSql(described));
    options.key_descriptions.push_back(std::move(key_sql));
  }
  std::string order_by;
  for (size_t i = 0; i < orders.size(); ++i) {
    const std::string name = kOrderPrefix + std::to_string(i);
    select_list.push_back(WithAlias(orders[i]["expression"], name));
    hidden.push_back(name);
    if (!order_by.empty()) order_by += ", ";
    order_by += QuoteIdentifier(name) + OrderSuffix(orders[i]);
  }
  options.order_by = order_by;

  // The event-time column the operator sees: for dedup within the watermark the ORDER BY column;
  // for dedup a key that is the event-time column (then state is evicted), else the output
  // column that carries it (late rows are dropped, state is kept).
  if (within_watermark) {
    options.event_time_column = std::string(kOrderPrefix) + "0";
    options.delay_ms = event_time_stream->watermark->delay_ms;
  } else {
    for (size_t i = 0; i < keys.size() && options.event_time_column.empty(); ++i) {
      if (WatermarkedColumn(analysis, keys[i]) != nullptr) {
        options.event_time_column = options.key_columns[i];
      }
    }
    if (options.event_time_column.empty()) {
      options.event_time_column = EventTimeOutputName(analysis, top["select_list"]);
    }
  }

  StatefulPlanSpec spec;
  SLUICE_ASSIGN_OR_RETURN(std::string input_sql, analysis.ast->ToSql(input));
  spec.input_sqls.push_back(std::move(input_sql));
  if (!hidden.empty()) {
    std::string exclude;
    for (const std::string& h : hidden)
      exclude += (exclude.empty() ? "" : ", ") + QuoteIdentifier(h);
    spec.output_sql = "SELECT * EXCLUDE (" + exclude + ") FROM __op_output";
  }

  // UPDATE mode upserts by the deduplication key: it must be among the output columns.
  if (analysis.output_mode == sinks::OutputMode::kUpdate) {
    const Json& list = top["select_list"];
    auto output_name = [&](const Json& key) -> std::string {
      for (const Json& item : list) {
        if (item.value("class", "") == "STAR") continue;
        if (SameExpression(item, key)) {
          std::string alias = item.value("alias", "");
          if (!alias.empty()) return alias;
          std::vector<std::string> names = ColumnRefNames(item);
          if (!names.empty()) return names.back();
        }
      }
      return "";
    };
    if (keys.empty()) {
      for (const Json& item : list) {
        std::string name = item.value("alias", "");
        if (name.empty() && !ColumnRefNames(item).empty()) name = ColumnRefNames(item).back();
        if (name.empty()) {
          return Status::InvalidArgument(
              "UPDATE output mode with SELECT DISTINCT needs every output column named (a column "
              "or an alias, no *): the columns are the upsert key");
        }
        spec.update_keys.push_back(name);
      }
    } else {
      for (const Json& k : keys) {
        std::string name = output_name(k);
        if (name.empty()) {
          return Status::InvalidArgument(
              "UPDATE output mode with deduplication needs each deduplication key among the "
              "output columns (the upsert key)");
        }
        spec.update_keys.push_back(name);
      }
    }
  }

  if (within_watermark) {
    spec.operator_name = ops::kDedupeWithinWatermarkOperatorName;
    spec.op = std::make_unique<ops::DeduplicateWithinWatermark>(std::move(options));
  } else {
    spec.operator_name = ops::kDedupeOperatorName;
    spec.op = std::make_unique<ops::Deduplicate>(std::move(options));
  }
  return std::optional<StatefulPlanSpec>(std::move(spec));
}

}  // namespace sluice::plan
