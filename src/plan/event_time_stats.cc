#include "plan/event_time_stats.h"
#include "common/strings.h"

#include <algorithm>
#include <cctype>

namespace sluice::plan {
namespace {

// The __stream_<i> indexes named directly by a FROM clause (through joins, not subqueries).
void StreamsInFrom(const Json& from, std::vector<size_t>* out) {
  if (auto i = StreamIndexOf(from)) {
    out->push_back(*i);
  } else if (NodeType(from) == "JOIN") {
    StreamsInFrom(JoinLeft(from), out);
    StreamsInFrom(JoinRight(from), out);
  }
}

void Walk(const Json& node, const ParsedStreamingQuery& query, SqlAst& ast,
          std::vector<StatsFilters>* out);

void WalkFrom(const Json& from, const ParsedStreamingQuery& query, SqlAst& ast,
              std::vector<StatsFilters>* out) {
  const std::string type = NodeType(from);
  if (type == "SUBQUERY") {
    Walk(SubqueryNode(from), query, ast, out);
  } else if (type == "JOIN") {
    WalkFrom(JoinLeft(from), query, ast, out);
    WalkFrom(JoinRight(from), query, ast, out);
  }
}

void Walk(const Json& node, const ParsedStreamingQuery& query, SqlAst& ast,
          std::vector<StatsFilters>* out) {
  const std::string type = NodeType(node);
  if (type == "SET_OPERATION_NODE") {
    for (const Json* input : SetOperationInputs(node)) Walk(*input, query, ast, out);
    return;
  }
  if (type != "SELECT_NODE") return;
  WalkFrom(FromTable(node), query, ast, out);
  std::vector<size_t> streams;
  StreamsInFrom(FromTable(node), &streams);
  if (streams.empty() || WhereClause(node).is_null()) return;
  for (const Json& conjunct : Conjuncts(WhereClause(node))) {
    if (ContainsSubquery(conjunct) || ContainsAggregate(conjunct)) continue;
    std::vector<std::vector<std::string>> refs;
    VisitExpression(conjunct, [&](const Json& e) {
      auto names = ColumnRefNames(e);
      if (!names.empty()) refs.push_back(names);
      return true;
    });
    for (size_t i : streams) {
      if (i >= query.streams.size() || !query.streams[i].watermark) continue;
      const StreamRelation& r = query.streams[i];
      bool ok = !refs.empty();
      StatsFilter f;
      for (const auto& names : refs) {
        if (names.size() > 2 ||
            (names.size() == 2 && AsciiLower(names[0]) != AsciiLower(r.alias))) {
          ok = false;
          break;
        }
        const std::string& column = names.back();
        if (AsciiLower(column) == AsciiLower(r.watermark->column)) {
          ok = false;
          break;
        }
        f.columns.push_back(column);
      }
      if (!ok) continue;
      auto sql = ast.ExpressionToSql(conjunct);
      if (!sql.ok()) continue;
      f.sql = *sql;
      (*out)[i].push_back(std::move(f));
    }
  }
}

}  // namespace

std::vector<StatsFilters> FindStatsFilters(const ParsedStreamingQuery& query, const Json& tree,
                                           SqlAst& ast) {
  std::vector<StatsFilters> out(query.streams.size());
  Walk(tree, query, ast, &out);
  return out;
}

std::string EventTimeStatsSql(size_t i, const StreamRelation& relation,
                              const engine::Schema& stream_schema, const StatsFilters& filters) {
  const std::string col = QuoteIdentifier(relation.watermark->column);
  std::string where = col + " IS NOT NULL";
  for (const auto& f : filters) {
    bool all = std::all_of(f.columns.begin(), f.columns.end(), [&](const std::string& c) {
      return std::any_of(
          stream_schema.begin(), stream_schema.end(),
          [&](const engine::Field& field) { return AsciiLower(field.name) == AsciiLower(c); });
    });
    if (all) where += " AND (" + f.sql + ")";
  }
  return "SELECT count(*), min(epoch_ms(" + col + ")), max(epoch_ms(" + col + ")), avg(epoch_ms(" +
         col + ")::DOUBLE) FROM " + StreamViewName(i) + " AS " + QuoteIdentifier(relation.alias) +
         " WHERE " + where;
}

Result<EventTimeStats> ReadEventTimeStats(const engine::Batch& row) {
  EventTimeStats s;
  if (row.num_rows() != 1 || row.num_columns() != 4) {
    return Status::Internal("event-time statistics: expected one row of four columns");
  }
  SLUICE_ASSIGN_OR_RETURN(auto count, row.GetInt64(0, 0));
  s.count = count.value_or(0);
  if (s.count == 0) return s;
  SLUICE_ASSIGN_OR_RETURN(auto min, row.GetInt64(0, 1));
  SLUICE_ASSIGN_OR_RETURN(auto max, row.GetInt64(0, 2));
  SLUICE_ASSIGN_OR_RETURN(auto avg, row.GetDouble(0, 3));
  s.min_ms = min.value_or(0);
  s.max_ms = max.value_or(0);
  s.avg_ms = avg.value_or(0);
  return s;
}

}  // namespace sluice::plan
