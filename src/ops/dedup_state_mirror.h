// DedupStateMirror: an in-memory copy of one state partition of a streaming deduplication
// (ops/deduplicate.h): the set of keys in state, each with its eviction time (the state value's
// BIGINT: eventTimeMicros or expiresAtMicros), indexed by that time. The deduplication asks it
// whether a key is in state instead of reading RocksDB, and takes what the watermark expires from
// it instead of scanning the whole state.
//
// Contract: the caller keeps the mirror equal to the store it mirrors. It loads it from a freshly
// opened store (Load), makes every insertion and expiry on both, and drops it (Clear) whenever it
// can no longer vouch for that (an error, a version it did not commit). The mirror never writes to
// a store; a detached store (state::StateStore::DetachWorkingCopy) writes its snapshots from
// ForEachInKeyOrder. Not thread-safe: one partition, one thread at a time.
//
// Layout: an open-addressing hash table (linear probing, load <= 1/2, backward-shift deletion;
// hashes and keys in separate arrays) of keys, plus a
// map from a one-second bucket of eviction time to that bucket's (time, key) entries. A key that
// is never evicted (no eviction time) is only in the table.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/status.h"
#include "state/state_store.h"

namespace sluice::ops {

// The state value of a deduplication key with eviction time `micros` (the row codec encoding of
// one BIGINT, docs/formats/row-codec.md), of a NULL BIGINT (nullopt), and of zero columns.
std::string EncodeDedupStateTime(std::optional<int64_t> micros);
inline constexpr std::string_view kDedupEmptyStateValue = "\x01";
// The inverse of EncodeDedupStateTime: nullopt for the encoded NULL. Corruption for other bytes.
Result<std::optional<int64_t>> DecodeDedupStateTime(std::string_view value);

class DedupStateMirror {
 public:
  DedupStateMirror() = default;
  DedupStateMirror(DedupStateMirror&&) = default;
  DedupStateMirror& operator=(DedupStateMirror&&) = default;

  // Empties the mirror and releases its memory.
  void Clear();

  // Replaces the contents with the iterator's keys. `timed`: the values are
  // EncodeDedupStateTime's (NULL: never evicted); otherwise values are ignored and no key is
  // ever evicted. Sets *count to the number of keys the iterator gave (all of them, even when
  // they do not fit). Once bytes() exceeds max_bytes it stops filling, empties itself, sets *fits
  // to false and only counts. Errors: the iterator's, or Corruption for a malformed value (the
  // mirror is then empty).
  Status Load(state::StateIterator& it, bool timed, size_t max_bytes, bool* fits, int64_t* count);

  bool Contains(std::string_view key) const;

  // Adds `key` with eviction time `evict_us` (nullopt: never evicted). Returns false, changing
  // nothing, when the key is already there.
  bool Insert(std::string_view key, std::optional<int64_t> evict_us) {
    return Insert(key, HashOf(key), evict_us);
  }
  // The same with `hash` == HashOf(key), so that a caller inserting a run of keys can hash them
  // first and Prefetch the slots of the keys some inserts ahead: the table is larger than the
  // caches, and a probe is otherwise two cache misses (hash, then key).
  bool Insert(std::string_view key, uint64_t hash, std::optional<int64_t> evict_us);
  static uint64_t HashOf(std::string_view key);
  // A hint only: starts loading the slot where a key of this hash would be probed first.
  void Prefetch(uint64_t hash) const;

  // Removes the keys whose eviction time is <= threshold_us and returns them (in no order).
  std::vector<std::string> TakeExpired(int64_t threshold_us);

  // Calls emit(key, state value) for every key, in increasing key order (bytewise): the contents
  // of the store it mirrors, for a snapshot (state::StateStore::DetachWorkingCopy). `timed` as
  // for Load: values are EncodeDedupStateTime(eviction time), else kDedupEmptyStateValue.
  void ForEachInKeyOrder(bool timed,
                         const std::function<void(std::string_view, std::string_view)>& emit) const;

  size_t size() const { return size_; }
  // Approximate memory held: the table, the index and key bytes outside the strings.
  size_t bytes() const;

 private:
  struct Timed {
    int64_t evict_us;
    std::string key;
  };
  // The slot holding `key`, or the empty slot where it would go.
  size_t Probe(std::string_view key, uint64_t hash) const;
  void Grow();
  void EraseAt(size_t slot);
  static int64_t Bucket(int64_t micros);
  static size_t HeapBytes(const std::string& s);

  // The table: two parallel arrays, so that a probe reads 8 bytes per slot and touches a key only
  // when the hashes match. Size 0 or a power of two.
  std::vector<uint64_t> hashes_;  // 0: empty (stored hashes are never 0)
  std::vector<std::string> keys_;
  size_t size_ = 0;
  std::map<int64_t, std::vector<Timed>> by_time_;  // second bucket -> entries
  size_t indexed_ = 0;                             // entries in by_time_
  size_t heap_bytes_ = 0;                          // key bytes outside the string objects
};

}  // namespace sluice::ops
