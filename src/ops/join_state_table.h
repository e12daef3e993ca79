// JoinStateTable: the state of the stream-stream join (ops/stream_stream_join.h) over the stores
// of one batch, and every operation the join does on it. docs/formats/operator-state.md
// "Stream-stream join" is the byte-level specification; in short:
//
//   key   = side (1 byte: 'L' or 'R') + k + u64be(i)
//           k: the row codec encoding of the side's join key columns (engine/row_codec.h);
//           i: the row's index among the side's stored rows with that key, from 0 (a new row
//              gets the highest stored index + 1), so side + k prefixes one key's rows of a side
//              in arrival order. A key holding a NULL is never stored.
//   value = matched (1 byte, 1 once the row matched) + flip64(state time us) + the row codec
//           encoding of the side's own columns. flip64 = big-endian of the value with its sign
//           bit flipped; kNoTime (INT64_MAX) when the side has no state watermark. A value
//           shorter than 10 bytes is Corruption.
//   partition = state::PartitionForKey(k, number of partitions): both sides of a key together.
//
// A table is made per batch over the stores the runtime loaded (OperatorState::RunBatchOverAll;
// stores[p] is partition p's) and used from the query thread only. It remembers the matched
// flags it set in this batch (a row read before a flag was set sees it) and counts the rows it
// appended (numRowsUpdated). Errors: the stores' and Corruption for a damaged value.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "state/state_store.h"

namespace sluice::ops {

enum class JoinSide : char { kLeft = 'L', kRight = 'R' };

// A stored value, decoded.
struct JoinStoredValue {
  static constexpr int64_t kNoTime = std::numeric_limits<int64_t>::max();
  bool matched = false;
  int64_t state_us = kNoTime;
  std::string row;  // the side's own columns, row codec encoded
};

// One stored row as a scan read it.
struct JoinStateRow {
  int32_t partition = 0;
  std::string key;  // the full state key
  JoinStoredValue value;
};

std::string EncodeJoinStoredValue(bool matched, int64_t state_us, std::string_view row);
Result<JoinStoredValue> DecodeJoinStoredValue(std::string_view bytes);

class JoinStateTable {
 public:
  explicit JoinStateTable(const std::vector<state::StateStore*>& stores);

  int32_t num_partitions() const { return static_cast<int32_t>(stores_.size()); }

  // The stored rows of `side` for each of `keys` (distinct encoded join keys): per partition one
  // iterator over the side, seeked to each key in key order.
  Result<std::vector<std::vector<JoinStateRow>>> Scan(JoinSide side,
                                                      const std::vector<const std::string*>& keys);
  // The next free row index of `side` for each of `keys`.
  Result<std::vector<int64_t>> NextIndexes(JoinSide side,
                                           const std::vector<const std::string*>& keys);
  // Tells the stores that the keys a pass will append (for key j, rows_per_key[j] indexes from
  // next_index[j]) are new: one batched read per partition, so that the store counts them
  // without reading (and writing) row by row.
  Status AnnounceNewRows(JoinSide side, const std::vector<const std::string*>& keys,
                         const std::vector<size_t>& rows_per_key,
                         const std::vector<int64_t>& next_index);
  // Stores `row` of `side` under join key `key` at index *next (then advanced).
  Status Append(JoinSide side, const std::string& key, int64_t* next, bool matched,
                int64_t state_us, const std::string& row);
  // Whether a stored row has matched, counting this batch's SetMatched.
  bool IsMatched(const JoinStateRow& row) const;
  // Marks a stored row matched (a no-op when it is).
  Status SetMatched(const JoinStateRow& row);
  // Removes every stored row of `side` whose state time `evicts`, calling removed(value) for
  // each in key order per partition, partitions in order; returns how many.
  Result<int64_t> Evict(JoinSide side, const std::function<bool(int64_t state_us)>& evicts,
                        const std::function<void(const JoinStoredValue&)>& removed);

  // Rows appended by this table (numRowsUpdated).
  int64_t appended() const { return appended_; }

 private:
  int32_t PartitionOf(const std::string& key) const;
  Status ForEachPrefix(
      JoinSide side, const std::vector<const std::string*>& keys,
      const std::function<Status(size_t, const std::string&, state::StateIterator&)>& visit);

  std::vector<state::StateStore*> stores_;
  std::unordered_map<std::string, bool> matched_now_;  // state key -> matched, set in this batch
  int64_t appended_ = 0;
};

}  // namespace sluice::ops
