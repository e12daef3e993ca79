// StateMirror: an in-memory copy of one state partition of a windowed (or event-time keyed)
// streaming aggregation — state key -> state value (the layout of ops/state_rows.h) — with an
// index by eviction time. ops::StreamingAggregate reads a batch's groups from it instead of one
// RocksDB Get per group, and finds what the watermark expires without scanning the whole state.
//
// Contract: the caller keeps the mirror equal to the store it mirrors. It loads it from a freshly
// opened store (Load), makes every Put / expiry on both, and drops it (Clear) whenever it can no
// longer vouch for that (an error, a version it did not commit). The mirror never writes to a
// store. Not thread-safe: one partition, one thread at a time.
// Layout (this VM pays dearly for fresh memory and cache misses): a compact open-addressing
// table (8-byte slots: 32 bits of the key's hash and an entry id; linear probing, backward-shift
// removal) over entries kept in fixed-size chunks that never move (freed ids are reused); an
// entry holds its hash, eviction time and the key and value bytes in one string. The eviction
// index keeps hashes, not keys.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "state/state_store.h"

namespace sluice::ops {

class StateMirror {
 public:
  // Empties the mirror.
  void Clear();

  // Replaces the contents with the iterator's entries (values: ops/state_rows.h StateValue).
  // Stops with the iterator's error or Corruption for a malformed value (the mirror is then
  // empty). `max_bytes`: stops early, returning false in *fits, once bytes() exceeds it.
  Status Load(state::StateIterator& it, size_t max_bytes, bool* fits);

  // The state value of `key`, or nullopt. Valid until the next Put / Remove / TakeExpired /
  // Clear.
  std::optional<std::string_view> Find(std::string_view key) const;

  // Sets `key` to `value` (whose eviction time is evict_us).
  void Put(std::string_view key, int64_t evict_us, std::string_view value);

  // Removes `key` if present (its eviction-index entry is skipped by TakeExpired later).
  void Remove(std::string_view key);

  // Removes the entries whose eviction time is <= threshold_us and returns them as
  // (key, value), sorted by key (bytewise, the order of a store scan).
  std::vector<std::pair<std::string, std::string>> TakeExpired(int64_t threshold_us);

  size_t size() const { return size_; }
  // Approximate memory held (keys, values and per-entry overhead).
  size_t bytes() const { return bytes_; }

 private:
  struct Entry {
    uint64_t hash = 0;
    int64_t evict_us = 0;
    uint32_t key_size = 0;
    std::string data;  // key bytes, then value bytes
    std::string_view key() const { return std::string_view(data).substr(0, key_size); }
    std::string_view value() const { return std::string_view(data).substr(key_size); }
  };
  struct Slot {
    uint32_t tag = 0;  // the hash's low 32 bits (its home slot is tag & mask)
    uint32_t id = kEmpty;
  };
  static constexpr uint32_t kEmpty = UINT32_MAX;
  static constexpr uint32_t kChunkBits = 8;  // 256 entries a chunk

  static uint64_t Hash(std::string_view key);
  Entry& At(uint32_t id) { return chunks_[id >> kChunkBits][id & ((1u << kChunkBits) - 1)]; }
  const Entry& At(uint32_t id) const {
    return chunks_[id >> kChunkBits][id & ((1u << kChunkBits) - 1)];
  }
  // The slot holding `key`, or the empty slot where its probe sequence ends.
  size_t Probe(std::string_view key, uint64_t hash) const;
  uint32_t NewEntry();
  void Grow();
  void EraseAt(size_t slot);  // frees the entry; backward-shift removal of the slot
  static size_t Cost(size_t key_size, size_t value_size) { return 2 * key_size + value_size + 96; }

  std::vector<Slot> slots_;  // a power of two in size (or empty), at most 3/4 full
  std::vector<std::unique_ptr<Entry[]>> chunks_;
  uint32_t num_ids_ = 0;        // entry ids handed out (chunks hold at least that many)
  std::vector<uint32_t> free_;  // ids of freed entries
  size_t size_ = 0;
  // Eviction time -> hashes of the keys put with it (an entry whose time changed later, or that
  // was removed, is skipped).
  std::map<int64_t, std::vector<uint64_t>> by_evict_;
  size_t bytes_ = 0;
};

}  // namespace sluice::ops
