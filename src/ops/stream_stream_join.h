// StreamStreamJoin: the stream-stream equi-join (Spark's StreamingSymmetricHashJoinExec, progress
// operator name "symmetricHashJoin"): inner, LEFT/RIGHT/FULL OUTER and LEFT SEMI.
// docs/streaming-plan.md §4; semantics: docs/operators.md "Stream-stream join".
//
// Inputs (Process gets two batches: left, right). Each side's batch holds the side's own columns
// (what the output shows of it) plus hidden columns computed by the planner's input SQL and named
// in JoinSideSpec: the join keys, the event time for late-row dropping, the time compared with the
// side's state watermark, and the result of the ON conjuncts that use only this side.
//
// Output: one row per join result with two STRUCT columns, named by the sides' aliases:
//   <left.alias> STRUCT(<left's own columns>), <right.alias> STRUCT(<right's own columns>)
// so that an output SQL over it can say `l.key`, `r.w.end` as the query did. The struct of the
// side that an outer row has no match on is NULL. LEFT SEMI emits left rows (the right struct is
// always NULL), each at most once.
//
// Per batch, as Spark does:
// 1. Each side drops its late rows (late time <= late_watermark_ms, in microseconds), counted in
//    numRowsDroppedByWatermark.
// 2. New left rows join the right side's state; every left row is then stored (LEFT SEMI: only
//    unmatched ones).
// 3. New right rows join the left side's state (which now holds this batch's left rows, so new x
//    new pairs are found exactly once); a right row is stored unless the state watermark would
//    evict it in this batch (RIGHT/FULL OUTER store it anyway when it had no match). LEFT SEMI
//    emits each stored left row on its first match only.
// A row whose key has a NULL, or that fails its side's pre-join filter, matches nothing and is not
// stored; on the preserved side of an outer join it is emitted with NULLs at once.
// 4. Eviction: a side with a state watermark drops its stored rows whose state time (us) <=
//    (eviction_watermark_ms + state_watermark_offset_ms) * 1000. On the preserved side(s) of an
//    outer join, an evicted row that never matched is emitted with NULLs.
// Without any state watermark, state is kept forever (inner joins on non-time keys).
//
// State: one store per partition ("default"), laid out and operated on by JoinStateTable
// (ops/join_state_table.h: key = side byte + encoded join key + row index, value = matched flag +
// state time + encoded row), opened and committed by OperatorState (ops/operator_state.h).
// numRowsTotal counts the rows of both sides; numRowsUpdated the rows appended to state;
// numRowsRemoved the rows evicted.
//
// Determinism: Process is a function of (state version batch_id, inputs, watermarks), so a re-run
// of a batch after a crash produces the same output and state.
// Thread safety: driven by the query thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"
#include "engine/types.h"
#include "ops/stateful_operator.h"
#include "state/partitions.h"

namespace sluice::ops {

enum class JoinType { kInner, kLeftOuter, kRightOuter, kFullOuter, kLeftSemi };

// Spark's name of a join type ("Inner", "LeftOuter", "RightOuter", "FullOuter", "LeftSemi"), as its
// messages show it.
const char* JoinTypeName(JoinType type);

// One side of the join: how to read its input batch.
struct JoinSideSpec {
  // The side's name in the output (its struct column) and in condition_sql: "l", "i", ...
  std::string alias;
  // Hidden columns holding the join key values, in key order (the same count on both sides; the
  // i-th keys of both sides are compared for equality). Their types may differ between the sides:
  // they are then cast to their common type (DuckDB's UNION rules) before encoding.
  std::vector<std::string> key_columns;
  // Hidden BIGINT column: the side's event time in microseconds (of the window end for a window
  // column), for late-row dropping; empty when the side has no watermark.
  std::string late_time_column;
  // Hidden BIGINT column: the time in microseconds that the side's state watermark is compared
  // with (the watermarked join key, or the side's event time for a range condition); empty when
  // the side's rows are never evicted.
  std::string state_time_column;
  // The side's state watermark = eviction watermark + this (ms). 0 for a watermarked join key;
  // derived from the range condition otherwise (with Spark's -1 ms for non-strict bounds).
  int64_t state_watermark_offset_ms = 0;
  // Hidden BOOLEAN column: the ON conjuncts that read only this side (NULL counts as false);
  // empty when there are none.
  std::string pre_filter_column;

  // True when `name` is one of the hidden columns above.
  bool IsHidden(const std::string& name) const;
};

struct StreamStreamJoinOptions {
  JoinType type = JoinType::kInner;
  JoinSideSpec left;
  JoinSideSpec right;
  // The rest of the ON condition (the conjuncts that read both sides, equalities of the keys
  // excluded): SQL over the struct columns named left.alias and right.alias. Empty: none.
  std::string condition_sql;
  // Per join key, the equality as the query wrote it ("l.k = r.k"): the key's name in the state
  // schema, whose "side" field also names the join type, so that a restart with a different join
  // is refused naming the difference. Empty: "key<k>".
  std::vector<std::string> key_descriptions;
  // Tests: use the in-memory state store instead of RocksDB whatever the conf says.
  bool force_in_memory_state = false;
};

class StreamStreamJoin final : public StatefulOperator {
 public:
  explicit StreamStreamJoin(StreamStreamJoinOptions options);
  ~StreamStreamJoin() override;

  // Keeps the context; the state stores are opened by the first Process (their schema is the
  // inputs'). InvalidArgument for options that cannot work (key counts differ, empty aliases).
  Status Open(const OperatorContext& context) override;
  // inputs = {left, right}; both must have their columns (an input SQL's result always has). The
  // output is described above. Errors name the batch.
  Result<engine::Batch> Process(const OperatorBatch& batch,
                                const std::vector<engine::Batch>& inputs) override;
  // True when a side has a state watermark and next > used (Spark's shouldRunAnotherBatch).
  bool WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const override;
  StateOperatorProgress Progress() const override { return progress_; }

  const StreamStreamJoinOptions& options() const { return options_; }

 private:
  struct Impl;

  StreamStreamJoinOptions options_;
  OperatorContext context_;
  std::unique_ptr<Impl> impl_;
  StateOperatorProgress progress_;
};

}  // namespace sluice::ops
