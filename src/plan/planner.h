// The streaming planner: analyzes a parsed streaming query (plan/stream_query_parser.h), refuses
// what the output mode does not support (Spark's UnsupportedOperationChecker), and builds the
// IncrementalPlan the micro-batch loop runs. docs/streaming-plan.md §2.
//
// Dispatch: a query without a stateful shape becomes a stateless StreamingPlan; aggregation is
// planned here (plan/aggregate_planner.h); deduplication and stream-stream joins by the hooks
// PlanDeduplication (plan/dedup_planner.h) and PlanStreamJoin (plan/join_planner.h), which return
// std::nullopt for "not my shape". A chain of two stateful operators (an aggregation over a
// deduplicating subquery or over a stream-stream join) is planned part by part into one
// StreamingPlan::Chain with Spark's per-operator watermark propagation (plan/stateful_plan.h);
// Spark's global-watermark correctness check refuses the chains that could drop correct rows.
//
// Thread safety: PlanStreamingQuery is reentrant (it opens its own connection).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"
#include "ops/stateful_operator.h"
#include "plan/incremental_plan.h"
#include "plan/sql_ast.h"
#include "plan/stream_query_parser.h"
#include "sinks/sink.h"

namespace sluice::plan {

struct StreamingQuerySpec {
  ParsedStreamingQuery query;
  sluice::OutputMode output_mode = sluice::OutputMode::kAppend;
};

struct PlannedStreamingQuery {
  std::unique_ptr<IncrementalPlan> plan;
  // UPDATE mode: the output columns that are the MERGE key of the target (the output columns
  // without aggregates). Empty for APPEND and COMPLETE, and for an UPDATE aggregation whose
  // output does not carry every grouping key: its changed groups' rows are appended.
  std::vector<std::string> update_keys;
  // UPDATE mode of a global aggregation (no GROUP BY key, so no MERGE key): the result is one
  // row, which each batch's row replaces (sinks/delta_sink.h update_single_row).
  bool update_single_row = false;
  // Stateful operator names by operator id: top-down (0 = the operator feeding the sink).
  std::vector<std::string> operators;
};

// Refuses, with the reason (InvalidArgument), what the model does not support for the output
// mode: e.g. "Append output mode not supported when there are streaming aggregations on streaming
// DataFrames/DataSets without watermark".
Result<PlannedStreamingQuery> PlanStreamingQuery(engine::Engine* engine,
                                                 const StreamingQuerySpec& spec);

// ---- What the shape planners get and give ----

// The analyzed query, shared by the shape planners.
struct QueryAnalysis {
  const ParsedStreamingQuery* query = nullptr;  // streams (views __stream_<i>), watermarks
  sluice::OutputMode output_mode = sluice::OutputMode::kAppend;
  std::string sql;        // query->sql after RewriteWindowCalls: the text `top` is the tree of
  Json top;               // the top-level SELECT node (SqlAst::ParseSelect(sql))
  SqlAst* ast = nullptr;  // ToSql / ExpressionToSql of rewritten trees

  // The top-level SELECT node's shape.
  bool has_aggregation = false;  // GROUP BY or an aggregate call in the select list / HAVING
  bool has_distinct = false;     // SELECT DISTINCT / DISTINCT ON
  bool has_qualify = false;      // QUALIFY clause
  // Stream relations whose WATERMARK names `column` (case-insensitive); empty when none.
  std::vector<size_t> StreamsWithWatermarkColumn(std::string_view column) const;
  // Set for the part of a query above a stream-stream join (which reads the join's output):
  // the columns that carry a side's watermark, as {side alias, column name}. nullopt otherwise.
  std::optional<std::vector<std::pair<std::string, std::string>>> join_watermark_columns;
  // Whether the column reference `names` ("col" or "alias.col") is a watermarked event-time
  // column. Above a join: exactly one of join_watermark_columns (qualified by its side, as the
  // join planner writes every reference), so `A.dateTime` is not watermarked when only the
  // other side's `dateTime` is. Elsewhere: a column named like a stream's WATERMARK column.
  bool IsWatermarkedColumn(const std::vector<std::string>& names) const;
};

// A planned stateful shape: one operator between input SQL and output SQL (stateful_plan.h).
struct StatefulPlanSpec {
  std::string operator_name;  // Spark's: "stateStoreSave", "dedupe", "symmetricHashJoin", ...
  // Per operator input, SQL over the __stream_<i> views (and static relations) giving the rows
  // the operator gets; one entry (aggregate, dedup) or two (join: left, right).
  std::vector<std::string> input_sqls;
  std::unique_ptr<ops::StatefulOperator> op;
  // SQL over the table "__op_output" (the operator's output) giving the rows for the sink.
  // Empty means the operator's output as is.
  std::string output_sql;
  // Last stage only, may be empty: a stateless SELECT over the table "__stage_<k>" (this stage's
  // rows for the sink) whose result goes to the sink instead (a per-window top-N over an
  // APPEND-mode aggregation, planner.cc PlanStatelessOverAggregation).
  std::string post_sql;
  // UPDATE mode: the output columns without aggregates (the MERGE key).
  std::vector<std::string> update_keys;
  // UPDATE mode of an aggregation whose output does not carry every grouping key (or the
  // window): no output column identifies a group, so update_keys is empty and the sink gets the
  // changed groups' rows appended each batch, as a Spark sink without a key gets them.
  bool update_appends = false;
  // Spark's produceOutputWatermark: the watermark of the rows this operator outputs, relative to
  // its input watermark (ms, <= 0). A stream-stream join with range conditions outputs rows as
  // old as its oldest state watermark (the smallest side offset); other operators output rows at
  // their input watermark (0). A downstream operator's watermarks are its upstream's plus this.
  int64_t output_watermark_offset_ms = 0;
};

}  // namespace sluice::plan
