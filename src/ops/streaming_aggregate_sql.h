// The SQL of streaming aggregation (ops/streaming_aggregate.h), built here so that
// streaming_aggregate.cc holds the control flow only.
//
// The operator registers, on its own connection, the batch as __agg_in, its partial rows as
// __agg_partial (late-row filter) or __agg_batch (merge), the decoded state rows as __agg_state
// and the rows to emit as __agg_rows. Partial rows carry the helper columns __gstart_us (the
// window start in us, 0 without a window) and __evict_us (the eviction time in us: window end or
// event-time key; NULL when never evicted); session partial rows also __ord and __seq (the merge
// order of first/last). Thread safety: stateless functions.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/types.h"
#include "ops/streaming_aggregate.h"

namespace sluice::ops {

// One partial aggregate column of a call: its name and the SQL to compute and merge it.
struct AggregatePartial {
  std::string name;
  std::string batch_sql;    // over the input rows, grouped (windowed) or per row (session)
  std::string merge_fn;     // "sum", "min", "max", "first", "last"; "" = merge_sql
  std::string merge_sql;    // the merge aggregate when merge_fn is empty (sketches)
  std::string schema_name;  // the column's name in the state schema
};

struct AggregatePartials {
  std::vector<AggregatePartial> partials;  // in call order (avg has two)
  std::vector<std::string> finals;         // per call: its final value over the partials
};

// The partial columns of `calls` (per_row: sessions, one partial row per input row).
// `type_of(column)` gives an input column's type. InvalidArgument for an approx_count_distinct
// precision outside 4..16.
Result<AggregatePartials> AggregatePartialsSql(
    const std::vector<AggregateCall>& calls,
    const std::function<Result<engine::DataType>(const std::string&)>& type_of, bool per_row);

// "<window start us> AS __gstart_us, <eviction us> AS __evict_us".
std::string AggregateHelpersSql(const std::optional<TimeWindowSpec>& window,
                                const std::optional<std::string>& event_time_key);

struct AggregateBatchSqlSpec {
  std::vector<std::string> key_items;  // the quoted plain keys
  const std::optional<TimeWindowSpec>* window = nullptr;
  // The event time's type when it is TIMESTAMP / TIMESTAMPTZ (integer window assignment).
  std::optional<engine::TypeId> time_type;
  const std::vector<AggregatePartial>* partials = nullptr;
  std::string helpers;  // AggregateHelpersSql
  // The per-window top-1 pre-reduction of the windowed rows (over column __ws); empty: none.
  std::function<std::string(const std::string& rows)> pre_reduce;
  // No keys and no window (a global aggregation): the partial row of an empty input is the
  // initial row (count 0, the other partials NULL), as Spark's aggregation without grouping keys
  // gives it. False: an empty input gives no row.
  bool empty_input_row = false;
};

// Over __agg_in: the batch's partial rows per (keys, window) (sessions: per row), with helpers.
std::string AggregateBatchSql(const AggregateBatchSqlSpec& spec);

// Over __agg_state and __agg_batch: the merged rows per group (sessions: per merged session),
// with helpers. `row_names` are the state row's columns; `type_sql(name)` a partial's type.
std::string AggregateMergeSql(const std::vector<std::string>& key_items, const std::string& wcol,
                              bool session, const std::vector<std::string>& row_names,
                              const std::vector<AggregatePartial>& partials,
                              const std::function<std::string(const std::string&)>& type_sql,
                              const std::string& helpers);

// Over __agg_rows: the output columns (keys, window, one per call).
std::string AggregateFinalizeSql(const std::vector<std::string>& key_items, const std::string& wcol,
                                 const std::vector<std::string>& finals,
                                 const std::vector<AggregateCall>& calls);

// Over __agg_partial: its rows that are not late by the late watermark (ms).
std::string AggregateNotLateSql(int64_t late_watermark_ms);

}  // namespace sluice::ops
