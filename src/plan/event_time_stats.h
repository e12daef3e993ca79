// Event-time statistics of a watermark node (docs/streaming-plan.md §3): count / min / max / avg
// (ms) of the event-time column of __stream_<i>, after the WHERE conjuncts that do not use the
// event-time column (docs/sql-reference.md: such a filter runs before the watermark).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"
#include "plan/incremental_plan.h"
#include "plan/sql_ast.h"
#include "plan/stream_query_parser.h"

namespace sluice::plan {

// One candidate pushed-down conjunct: its SQL and the (unqualified) columns it reads.
struct StatsFilter {
  std::string sql;
  std::vector<std::string> columns;
};
using StatsFilters = std::vector<StatsFilter>;

// Per stream of `query`, the WHERE conjuncts of the SELECT whose FROM names that stream directly
// that use neither the event-time column, another relation's columns, subqueries nor aggregates.
// `tree` is the top SELECT node of the query (after RewriteWindowCalls). Never fails: a shape it
// does not understand gives no filters (the stats then count every row).
std::vector<StatsFilters> FindStatsFilters(const ParsedStreamingQuery& query, const Json& tree,
                                           SqlAst& ast);

// The SQL computing the stats of stream `i` over __stream_<i>: one row (count, min_ms, max_ms,
// avg_ms), applying the filters whose columns all exist in `stream_schema`.
std::string EventTimeStatsSql(size_t i, const StreamRelation& relation,
                              const engine::Schema& stream_schema, const StatsFilters& filters);

// Reads the row EventTimeStatsSql produced.
Result<EventTimeStats> ReadEventTimeStats(const engine::Batch& row);

}  // namespace sluice::plan
