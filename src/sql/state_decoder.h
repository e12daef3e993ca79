// Decodes the state entries of Sluice's stateful operators into rows, for read_state() and
// `sluice state dump`. The bytes are the operators' (docs/streaming-plan.md §4); the column names
// and types come from the state schema in the checkpoint (state/<op>/0/_metadata/schema), the
// layout from the operator name in the operator metadata:
//
//   stateStoreSave, sessionWindowStateStoreSaveExec (ops/state_rows.h)
//     value = [i64 eviction time][row codec of the state row]; the state row's columns (the
//     schema's value fields) are the grouping keys, the window, then the partial aggregates
//     (__p<j>, avg as __p<j>_sum and __p<j>_cnt). Columns: the value fields, evictAtMicros
//     (NULL when the row never expires).
//   dedupe, dedupeWithinWatermark (ops/deduplicate.cc)
//     key = row codec of the key fields, value = row codec of the value fields (none, or
//     eventTimeMicros / expiresAtMicros). Columns: key fields, value fields.
//   symmetricHashJoin (ops/stream_stream_join.cc)
//     key = ['L'|'R'][row codec of the join keys][u64 index], value = [matched][i64 state time]
//     [row codec of that side's columns]. Columns: the key fields (the side, 'left' or
//     'right'; the join keys; the index), then the value fields (matched; stateTimeUs, NULL when
//     the row never expires; the left side's columns, "<alias>.<column>", then the right
//     side's, NULL for the other side's row).
//   transformWithStateExec (ops/transform_with_state.h, docs/state.md "Custom state")
//     key = [u32 len][grouping key row]['v' variable [map key] | 't' timer time]; the partition's
//     timer index entries (0xFF 'T' ...) are left out. Columns: the grouping key fields, entry
//     ('value' | 'list' | 'map' | 'timer'), variable, mapKey, value (as text), expiresAtMicros
//     (the TTL expiry, NULL without TTL), timerMs.
//   globalLimit (ops/global_limit.h)
//     key = row codec of zero columns (the byte 0x01), value = row codec of `count` BIGINT (the
//     rows the limit has let through). Columns: count.
//   any other operator: key BLOB, value BLOB (the raw bytes).
//
// Every batch starts with operator_id BIGINT, operator_name VARCHAR, partition_id INTEGER. A
// column whose name is already taken gets a suffix (_2, _3, ...).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"
#include "state/operator_metadata.h"

namespace sluice::sql {

struct StateEntry {
  int32_t partition = 0;
  std::string key;
  std::string value;
};

// The rows of `entries` (one row per entry, in order). Corruption naming the operator, the
// partition and what is wrong when bytes do not match the layout or the schema.
Result<engine::Batch> DecodeOperatorState(const state::OperatorMetadata& metadata,
                                          const state::StateSchema& schema,
                                          const std::vector<StateEntry>& entries);

}  // namespace sluice::sql
