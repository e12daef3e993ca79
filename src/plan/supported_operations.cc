#include "plan/supported_operations.h"

namespace sluice::plan {
namespace {

bool HasModifier(const Json& node, const char* type) {
  if (!node.contains("modifiers")) return false;
  for (const auto& m : node["modifiers"]) {
    if (m.value("type", "") == type) return true;
  }
  return false;
}

bool HasOverWindow(const Json& node) {
  bool found = false;
  for (const char* key : {"select_list", "where_clause", "having", "qualify"}) {
    if (!node.contains(key)) continue;
    VisitExpression(node[key], [&](const Json& e) {
      if (e.value("class", "") == "WINDOW") found = true;
      return !found;
    });
  }
  return found;
}

bool SelectHasAggregation(const Json& node) {
  if (!node["group_expressions"].empty()) return true;
  if (!node["having"].is_null()) return true;
  return ContainsAggregate(node["select_list"]);
}

Status CheckNested(const Json& node, bool top);
bool NodeReadsStream(const Json& node);

// True when the FROM tree reads a stream relation (a __stream_<i> view, stream_query_parser.h).
bool FromReadsStream(const Json& from) {
  if (!from.is_object()) return false;
  const std::string type = from.value("type", "");
  if (type == "BASE_TABLE") return from.value("table_name", "").rfind("__stream_", 0) == 0;
  if (type == "SUBQUERY" && from.contains("subquery")) {
    return NodeReadsStream(from["subquery"].value("node", Json()));
  }
  if (type == "JOIN") return FromReadsStream(from["left"]) || FromReadsStream(from["right"]);
  return false;
}

bool NodeReadsStream(const Json& node) {
  if (!node.is_object()) return false;
  if (node.value("type", "") == "SELECT_NODE") return FromReadsStream(node["from_table"]);
  for (const char* side : {"left", "right"}) {
    if (node.contains(side) && NodeReadsStream(node[side])) return true;
  }
  if (node.contains("children")) {
    for (const auto& c : node["children"]) {
      if (NodeReadsStream(c)) return true;
    }
  }
  return false;
}

// Spark's checks of a join between a stream and a static relation: the stream must be on the
// preserved (outer) side of an outer join, and a full outer join needs streams on both sides.
Status CheckStreamStaticJoin(const Json& join) {
  const bool left = FromReadsStream(join["left"]);
  const bool right = FromReadsStream(join["right"]);
  if (left == right) return Status::OK();  // both static, or stream-stream (join_planner.cc)
  const std::string jt = join.value("join_type", "INNER");
  if ((jt == "FULL" || jt == "OUTER")) {
    return Status::InvalidArgument(
        "Full outer joins with streaming DataFrames/Datasets are not supported when only one side "
        "is a stream (a stream FULL OUTER JOIN a static relation)");
  }
  if (jt == "LEFT" && right) {
    return Status::InvalidArgument(
        "Left outer join with a streaming DataFrame/Dataset on the right and a static "
        "DataFrame/Dataset on the left is not supported (put the stream on the left)");
  }
  if (jt == "RIGHT" && left) {
    return Status::InvalidArgument(
        "Right outer join with a streaming DataFrame/Dataset on the left and a static "
        "DataFrame/Dataset on the right is not supported (use a LEFT JOIN with the stream on the "
        "left)");
  }
  if ((jt == "SEMI" || jt == "ANTI") && right) {
    return Status::InvalidArgument(
        std::string(jt == "SEMI" ? "Left semi" : "Left anti") +
        " joins with a streaming DataFrame/Dataset on the right and a static DataFrame/Dataset "
        "on the left are not supported");
  }
  return Status::OK();
}

Status CheckFrom(const Json& from) {
  if (!from.is_object()) return Status::OK();
  std::string type = from.value("type", "");
  if (type == "SUBQUERY" && from.contains("subquery")) {
    return CheckNested(from["subquery"].value("node", Json()), false);
  }
  if (type == "JOIN") {
    SLUICE_RETURN_NOT_OK(CheckStreamStaticJoin(from));
    SLUICE_RETURN_NOT_OK(CheckFrom(from["left"]));
    return CheckFrom(from["right"]);
  }
  return Status::OK();
}

Status CheckNested(const Json& node, bool top) {
  if (!node.is_object()) return Status::OK();
  std::string type = node.value("type", "");
  if (type == "SET_OPERATION_NODE") {
    std::string op = node.value("setop_type", "");
    if (op != "UNION" && op != "UNION_BY_NAME") {
      return Status::InvalidArgument(op + " is not supported on streaming DataFrames/Datasets");
    }
    if (!node.value("setop_all", true)) {
      return Status::InvalidArgument(
          "UNION (without ALL) is a deduplication, which is not supported here yet; use UNION "
          "ALL, or SELECT DISTINCT over it");
    }
    for (const char* side : {"left", "right"}) {
      if (node.contains(side)) SLUICE_RETURN_NOT_OK(CheckNested(node[side], false));
    }
    if (node.contains("children")) {
      for (const auto& c : node["children"]) SLUICE_RETURN_NOT_OK(CheckNested(c, false));
    }
    return Status::OK();
  }
  if (type != "SELECT_NODE") return Status::OK();
  if (HasModifier(node, "LIMIT_MODIFIER") || HasModifier(node, "LIMIT_PERCENT_MODIFIER")) {
    return Status::InvalidArgument(
        "LIMIT and OFFSET are not supported on streaming DataFrames/Datasets yet");
  }
  if (HasOverWindow(node) && !(top && !node["qualify"].is_null())) {
    return Status::InvalidArgument(
        "Non-time-based windows are not supported on streaming DataFrames/Datasets (OVER ...)");
  }
  if (!top) {
    if (SelectHasAggregation(node)) {
      return Status::InvalidArgument(
          "a streaming aggregation below the top level of the query (in a subquery) is not "
          "supported yet");
    }
    if (HasModifier(node, "DISTINCT_MODIFIER") || !node["qualify"].is_null()) {
      return Status::InvalidArgument(
          "a streaming deduplication below the top level of the query (in a subquery) is not "
          "supported yet");
    }
    if (HasModifier(node, "ORDER_MODIFIER")) {
      return Status::InvalidArgument(
          "Sorting is not supported on streaming DataFrames/Datasets, unless it is on aggregated "
          "DataFrame/Dataset in Complete output mode");
    }
  }
  return CheckFrom(node["from_table"]);
}

}  // namespace

Status CheckSupportedOperations(const QueryAnalysis& analysis) {
  return CheckNested(analysis.top, true);
}

Status CheckStatelessOutputMode(const QueryAnalysis& analysis) {
  if (analysis.output_mode == sinks::OutputMode::kComplete) {
    return Status::InvalidArgument(
        "Complete output mode not supported when there are no streaming aggregations on "
        "streaming DataFrames/Datasets");
  }
  if (analysis.top.value("type", "") == "SELECT_NODE" &&
      HasModifier(analysis.top, "ORDER_MODIFIER")) {
    return Status::InvalidArgument(
        "Sorting is not supported on streaming DataFrames/Datasets, unless it is on aggregated "
        "DataFrame/Dataset in Complete output mode");
  }
  return Status::OK();
}

}  // namespace sluice::plan
