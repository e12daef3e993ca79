#include "plan/supported_operations.h"

#include "engine/relation_names.h"

namespace sluice::plan {
namespace {

bool HasOverWindow(const Json& node) {
  bool found = false;
  for (const Json* clause :
       {&SelectList(node), &WhereClause(node), &Having(node), &Qualify(node)}) {
    VisitExpression(*clause, [&](const Json& e) {
      if (ExpressionClass(e) == "WINDOW") found = true;
      return !found;
    });
  }
  return found;
}

bool SelectHasAggregation(const Json& node) {
  if (!GroupExpressions(node).empty()) return true;
  if (!Having(node).is_null()) return true;
  return ContainsAggregate(SelectList(node));
}

Status CheckNested(const Json& node, bool top);
bool NodeReadsStream(const Json& node);

// True when the FROM tree reads a stream relation (a __stream_<i> view, stream_query_parser.h).
bool FromReadsStream(const Json& from) {
  const std::string type = NodeType(from);
  if (type == "BASE_TABLE") return engine::HasStreamViewPrefix(BaseTableName(from));
  if (type == "SUBQUERY") return NodeReadsStream(SubqueryNode(from));
  if (type == "JOIN") return FromReadsStream(JoinLeft(from)) || FromReadsStream(JoinRight(from));
  return false;
}

bool NodeReadsStream(const Json& node) {
  if (IsSelectNode(node)) return FromReadsStream(FromTable(node));
  for (const Json* input : SetOperationInputs(node)) {
    if (NodeReadsStream(*input)) return true;
  }
  return false;
}

// Spark's checks of a join between a stream and a static relation: the stream must be on the
// preserved (outer) side of an outer join, and a full outer join needs streams on both sides.
Status CheckStreamStaticJoin(const Json& join) {
  const bool left = FromReadsStream(JoinLeft(join));
  const bool right = FromReadsStream(JoinRight(join));
  if (left == right) return Status::OK();  // both static, or stream-stream (join_planner.cc)
  const std::string jt = JoinType(join);
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
  const std::string type = NodeType(from);
  if (type == "SUBQUERY") return CheckNested(SubqueryNode(from), false);
  if (type == "JOIN") {
    SLUICE_RETURN_NOT_OK(CheckStreamStaticJoin(from));
    SLUICE_RETURN_NOT_OK(CheckFrom(JoinLeft(from)));
    return CheckFrom(JoinRight(from));
  }
  return Status::OK();
}

Status CheckNested(const Json& node, bool top) {
  const std::string type = NodeType(node);
  if (type == "SET_OPERATION_NODE") {
    std::string op = SetOperationType(node);
    if (op != "UNION" && op != "UNION_BY_NAME") {
      return Status::InvalidArgument(op + " is not supported on streaming DataFrames/Datasets");
    }
    if (!SetOperationAll(node)) {
      return Status::InvalidArgument(
          "UNION (without ALL) is a deduplication, which is not supported here yet; use UNION "
          "ALL, or SELECT DISTINCT over it");
    }
    for (const Json* input : SetOperationInputs(node)) {
      SLUICE_RETURN_NOT_OK(CheckNested(*input, false));
    }
    return Status::OK();
  }
  if (type != "SELECT_NODE") return Status::OK();
  if (HasModifier(node, "LIMIT_MODIFIER") || HasModifier(node, "LIMIT_PERCENT_MODIFIER")) {
    return Status::InvalidArgument(
        "LIMIT and OFFSET are not supported on streaming DataFrames/Datasets yet");
  }
  if (HasOverWindow(node) && !(top && !Qualify(node).is_null())) {
    return Status::InvalidArgument(
        "Non-time-based windows are not supported on streaming DataFrames/Datasets (OVER ...)");
  }
  if (!top) {
    if (SelectHasAggregation(node)) {
      return Status::InvalidArgument(
          "a streaming aggregation below the top level of the query (in a subquery) is not "
          "supported yet");
    }
    if (HasModifier(node, "DISTINCT_MODIFIER") || !Qualify(node).is_null()) {
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
  return CheckFrom(FromTable(node));
}

}  // namespace

Status CheckSupportedOperations(const QueryAnalysis& analysis) {
  return CheckNested(analysis.top, true);
}

Status CheckStatelessOutputMode(const QueryAnalysis& analysis) {
  if (analysis.output_mode == sluice::OutputMode::kComplete) {
    return Status::InvalidArgument(
        "Complete output mode not supported when there are no streaming aggregations on "
        "streaming DataFrames/Datasets");
  }
  if (IsSelectNode(analysis.top) && HasModifier(analysis.top, "ORDER_MODIFIER")) {
    return Status::InvalidArgument(
        "Sorting is not supported on streaming DataFrames/Datasets, unless it is on aggregated "
        "DataFrame/Dataset in Complete output mode");
  }
  return Status::OK();
}

}  // namespace sluice::plan
