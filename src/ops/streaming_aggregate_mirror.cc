#include "ops/streaming_aggregate_mirror.h"

#include <algorithm>

#include "ops/state_rows.h"

namespace sluice::ops {

void StateMirror::Clear() {
  entries_.clear();
  by_evict_.clear();
  bytes_ = 0;
}

Status StateMirror::Load(state::StateIterator& it, size_t max_bytes, bool* fits) {
  Clear();
  *fits = true;
  for (; it.Valid(); it.Next()) {
    auto parsed = ParseStateValue(it.value());
    if (!parsed.ok()) {
      Clear();
      return parsed.status();
    }
    Put(it.key(), parsed->evict_us, std::string(it.value()));
    if (bytes_ > max_bytes) {
      *fits = false;
      Clear();
      return Status::OK();
    }
  }
  Status st = it.status();
  if (!st.ok()) Clear();
  return st;
}

const std::string* StateMirror::Find(std::string_view key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second.value;
}

void StateMirror::Put(std::string_view key, int64_t evict_us, std::string value) {
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    bytes_ += Cost(key.size(), value.size());
    entries_.emplace(std::string(key), Entry{evict_us, std::move(value)});
    by_evict_[evict_us].emplace_back(key);
    return;
  }
  bytes_ += value.size();
  bytes_ -= it->second.value.size();
  it->second.value = std::move(value);
  if (it->second.evict_us != evict_us) {
    it->second.evict_us = evict_us;
    by_evict_[evict_us].emplace_back(key);
  }
}

std::vector<std::pair<std::string, std::string>> StateMirror::TakeExpired(int64_t threshold_us) {
  std::vector<std::pair<std::string, std::string>> out;
  auto end = by_evict_.upper_bound(threshold_us);
  for (auto b = by_evict_.begin(); b != end; ++b) {
    for (auto& key : b->second) {
      auto it = entries_.find(key);
      // Gone already (a duplicate index entry) or re-put with another eviction time.
      if (it == entries_.end() || it->second.evict_us != b->first) continue;
      bytes_ -= Cost(key.size(), it->second.value.size());
      out.emplace_back(std::move(key), std::move(it->second.value));
      entries_.erase(it);
    }
  }
  by_evict_.erase(by_evict_.begin(), end);
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace sluice::ops
