// Per-window top-1 pruning of an APPEND window aggregation (the planner's `keep_top` hint:
// docs/streaming-sql.md "Per-window top-1"). The planner gives the hint when the only thing that
// reads the aggregation's rows is a stateless `QUALIFY rank() / dense_rank() OVER (PARTITION BY
// <the window> ORDER BY <a grouping key>) = 1`: of each window only the groups whose order value
// is the window's best can ever pass it, so the operator keeps only those.
//
// What the operator then does (ops::StreamingAggregate with StreamingAggregateOptions::keep_top):
//  1. pre-reduction (PreReduceSql): of the batch's rows, after window assignment and before the
//     partial aggregation, only those whose order value is their window's best in the batch (or
//     NULL) are kept; the windows that are already late keep all their rows, so that the late
//     rows are counted as without the hint;
//  2. against the state (Filter): per window the state's best value (all non-NULL groups of a
//     window in the state share it); a batch group worse than it is dropped; a better one removes
//     the state's groups of that window (from the stores and the mirror) before the merge;
//  3. everything else (merge, eviction, output) is unchanged, so a window emits exactly its
//     best groups, with their full aggregates, which the QUALIFY then keeps — the same rows as
//     without the hint.
// NULL order values: a group whose order value is NULL is never dropped and never drops another
// (rank() puts NULLs first or last depending on the ORDER BY and the engine's default; keeping
// them makes the result right either way; NULL keys are rare).
// Order values are compared as row-codec bytes, whose byte order is the value order for the
// fixed-width types (docs/formats/row-codec.md): integers, DECIMAL, FLOAT / DOUBLE (NaN the
// greatest, -0 = +0, as DuckDB orders them), DATE, TIME, TIMESTAMP(TZ), BOOLEAN, UUID. Other
// types (VARCHAR, ...) get no pruning (TopOneFilter::Make returns nullptr): same results, the
// full state.
// Restarts: the per-window best is rebuilt from the state (one scan of every partition) whenever
// the filter has not itself seen the version the batch loads (a restart, a failed or re-run
// batch); the rebuild also drops the groups below their window's best.
// Thread safety: none (the operator's query thread).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"
#include "engine/types.h"
#include "ops/streaming_aggregate_mirror.h"
#include "state/state_store.h"

namespace sluice::ops {

// The hint: keep per window only the groups with the best value of `column`.
struct KeepTopSpec {
  std::string column;      // an input column that is a plain grouping key
  bool descending = true;  // best = greatest (ORDER BY ... DESC) or least (ASC)
};

class TopOneFilter {
 public:
  // nullptr when the hint cannot apply: not APPEND, no watermarked tumbling / sliding window, the
  // column is not one of `keys`, or its type (in `input_schema`) does not order by its bytes.
  static std::unique_ptr<TopOneFilter> Make(const KeepTopSpec& spec, bool append,
                                            bool window_watermarked, bool tumbling_or_sliding,
                                            int64_t window_size_us,
                                            const std::vector<std::string>& keys,
                                            const engine::Schema& input_schema);

  // Whether pruning by a column of this type is exact (see the header comment).
  static bool OrdersByBytes(const engine::DataType& type);

  // `rows_sql` (the batch's rows after window assignment, with the window start in microseconds
  // as column `window_start_column`) reduced to the rows whose order value is their window's best
  // in the batch or NULL, or whose window is late. The late watermark is a placeholder that
  // BindLateWatermark fills per batch.
  std::string PreReduceSql(const std::string& rows_sql,
                           const std::string& window_start_column) const;
  // `sql` with the placeholder of PreReduceSql replaced by the batch's late watermark.
  static std::string BindLateWatermark(std::string sql, int64_t late_watermark_ms);

  // The state schema's name of the order key: `description` plus the hint, so that a restart
  // that adds, drops or changes the hint is refused (the state of one is not the other's).
  std::string DescribeKey(const std::string& description) const;
  // The key's index in `keys` (and in the state row).
  size_t key_index() const { return key_index_; }

  struct FilterInput {
    int64_t version = 0;  // the store version this batch loaded (its batch id)
    // Windows whose end (eviction time) is <= this are evicted by this batch: forgotten after it.
    int64_t eviction_threshold_us = 0;
    const engine::Batch* partial = nullptr;  // batch partial rows: keys, __gstart_us, __evict_us
    const engine::Schema* row_schema = nullptr;  // the state row (keys, window, partials)
    const std::vector<state::StateStore*>* stores = nullptr;  // by partition, open
    std::vector<StateMirror>* mirror = nullptr;  // by partition; nullptr without the mirror
  };
  // Step 2 above: removes beaten state groups (stores and mirror) and returns the partial rows to
  // merge (the input itself when nothing is dropped). Errors leave the filter to be rebuilt.
  Result<engine::Batch> Filter(const FilterInput& in);

  // Groups dropped or removed as below their window's best, since Make (for tests and logs).
  int64_t pruned() const { return pruned_; }

 private:
  TopOneFilter(KeepTopSpec spec, std::vector<std::string> keys, size_t key_index,
               int64_t window_size_us);

  struct Window {
    std::string best;            // the best order value's row-codec payload
    std::set<std::string> keys;  // state keys of the window's groups with that value
  };
  // true when payload a ranks before b.
  bool Better(const std::string& a, const std::string& b) const;
  Status Rebuild(const FilterInput& in);
  Status RemoveFromState(const FilterInput& in, const std::string& key);

  KeepTopSpec spec_;
  std::vector<std::string> keys_;  // the plain grouping keys (input columns), in state order
  size_t key_index_ = 0;
  int64_t window_size_us_ = 0;
  std::map<int64_t, Window> windows_;  // by window start (us); ends at start + window_size_us_
  int64_t version_ = -1;               // the store version windows_ describes; -1: rebuild first
  int64_t pruned_ = 0;
};

}  // namespace sluice::ops
