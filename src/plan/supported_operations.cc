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

Status CheckFrom(const Json& from) {
  if (!from.is_object()) return Status::OK();
  std::string type = from.value("type", "");
  if (type == "SUBQUERY" && from.contains("subquery")) {
    return CheckNested(from["subquery"].value("node", Json()), false);
  }
  if (type == "JOIN") {
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
