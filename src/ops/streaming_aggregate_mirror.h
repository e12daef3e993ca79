// StateMirror: an in-memory copy of one state partition of a windowed (or event-time keyed)
// streaming aggregation — state key -> state value (the layout of ops/state_rows.h) — with an
// index by eviction time. ops::StreamingAggregate reads a batch's groups from it instead of one
// RocksDB Get per group, and finds what the watermark expires without scanning the whole state.
//
// Contract: the caller keeps the mirror equal to the store it mirrors. It loads it from a freshly
// opened store (Load), makes every Put / expiry on both, and drops it (Clear) whenever it can no
// longer vouch for that (an error, a version it did not commit). The mirror never writes to a
// store. Not thread-safe: one partition, one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
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

  // The state value of `key`, or nullptr. Valid until the next Put / TakeExpired / Clear.
  const std::string* Find(std::string_view key) const;

  // Sets `key` to `value` (whose eviction time is evict_us).
  void Put(std::string_view key, int64_t evict_us, std::string value);

  // Removes the entries whose eviction time is <= threshold_us and returns them as
  // (key, value), sorted by key (bytewise, the order of a store scan).
  std::vector<std::pair<std::string, std::string>> TakeExpired(int64_t threshold_us);

  size_t size() const { return entries_.size(); }
  // Approximate memory held (keys, values and per-entry overhead).
  size_t bytes() const { return bytes_; }

 private:
  struct Entry {
    int64_t evict_us = 0;
    std::string value;
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  static size_t Cost(size_t key_size, size_t value_size) { return 2 * key_size + value_size + 96; }

  std::unordered_map<std::string, Entry, Hash, std::equal_to<>> entries_;
  // Eviction time -> keys first put with it (an entry whose time changed later is skipped).
  std::map<int64_t, std::vector<std::string>> by_evict_;
  size_t bytes_ = 0;
};

}  // namespace sluice::ops
