#include "ops/streaming_aggregate_mirror.h"

#include <algorithm>
#include <functional>

#include "ops/state_rows.h"

namespace sluice::ops {

void StateMirror::Clear() {
  std::vector<Slot>().swap(slots_);
  std::vector<std::unique_ptr<Entry[]>>().swap(chunks_);
  std::vector<uint32_t>().swap(free_);
  num_ids_ = 0;
  size_ = 0;
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
    Put(it.key(), parsed->evict_us, it.value());
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

uint64_t StateMirror::Hash(std::string_view key) { return std::hash<std::string_view>{}(key); }

size_t StateMirror::Probe(std::string_view key, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  const uint32_t tag = static_cast<uint32_t>(hash);
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.id == kEmpty) return i;
    if (s.tag == tag) {
      const Entry& e = At(s.id);
      if (e.hash == hash && e.key() == key) return i;
    }
  }
}

uint32_t StateMirror::NewEntry() {
  if (!free_.empty()) {
    const uint32_t id = free_.back();
    free_.pop_back();
    return id;
  }
  if ((num_ids_ >> kChunkBits) == chunks_.size()) {
    chunks_.push_back(std::make_unique<Entry[]>(size_t{1} << kChunkBits));
  }
  return num_ids_++;
}

void StateMirror::Grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.resize(old.empty() ? 16 : old.size() * 2);
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.id == kEmpty) continue;
    size_t i = s.tag & mask;
    while (slots_[i].id != kEmpty) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

void StateMirror::EraseAt(size_t i) {
  Entry& e = At(slots_[i].id);
  e.hash = 0;
  std::string().swap(e.data);
  free_.push_back(slots_[i].id);
  const size_t mask = slots_.size() - 1;
  for (size_t j = (i + 1) & mask; slots_[j].id != kEmpty; j = (j + 1) & mask) {
    const size_t home = slots_[j].tag & mask;
    // Slot j stays if its home lies cyclically in (i, j]; otherwise it moves back to i.
    const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    slots_[i] = slots_[j];
    i = j;
  }
  slots_[i] = Slot();
  --size_;
}

std::optional<std::string_view> StateMirror::Find(std::string_view key) const {
  if (size_ == 0) return std::nullopt;
  const Slot& s = slots_[Probe(key, Hash(key))];
  if (s.id == kEmpty) return std::nullopt;
  return At(s.id).value();
}

void StateMirror::Put(std::string_view key, int64_t evict_us, std::string_view value) {
  const uint64_t hash = Hash(key);
  if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
  Slot& s = slots_[Probe(key, hash)];
  if (s.id == kEmpty) {
    s.tag = static_cast<uint32_t>(hash);
    s.id = NewEntry();
    Entry& e = At(s.id);
    e.hash = hash;
    e.evict_us = evict_us;
    e.key_size = static_cast<uint32_t>(key.size());
    e.data.reserve(key.size() + value.size());
    e.data.assign(key);
    e.data.append(value);
    ++size_;
    bytes_ += Cost(key.size(), value.size());
    by_evict_[evict_us].push_back(hash);
    return;
  }
  Entry& e = At(s.id);
  bytes_ += value.size();
  bytes_ -= e.data.size() - e.key_size;
  e.data.resize(e.key_size);
  e.data.append(value);
  if (e.evict_us != evict_us) {
    e.evict_us = evict_us;
    by_evict_[evict_us].push_back(hash);
  }
}

void StateMirror::Remove(std::string_view key) {
  if (size_ == 0) return;
  const size_t i = Probe(key, Hash(key));
  if (slots_[i].id == kEmpty) return;
  const Entry& e = At(slots_[i].id);
  bytes_ -= Cost(e.key_size, e.data.size() - e.key_size);
  EraseAt(i);
}

std::vector<std::pair<std::string, std::string>> StateMirror::TakeExpired(int64_t threshold_us) {
  std::vector<std::pair<std::string, std::string>> out;
  auto end = by_evict_.upper_bound(threshold_us);
  for (auto b = by_evict_.begin(); b != end && size_ > 0; ++b) {
    const size_t mask = slots_.size() - 1;
    for (uint64_t hash : b->second) {
      // Every entry of this hash that expires (gone already: a duplicate index entry; re-put
      // with a later eviction time: kept).
      const uint32_t tag = static_cast<uint32_t>(hash);
      for (size_t i = hash & mask; slots_[i].id != kEmpty;) {
        if (slots_[i].tag != tag || At(slots_[i].id).hash != hash ||
            At(slots_[i].id).evict_us > threshold_us) {
          i = (i + 1) & mask;
          continue;
        }
        Entry& e = At(slots_[i].id);
        bytes_ -= Cost(e.key_size, e.data.size() - e.key_size);
        out.emplace_back(std::string(e.key()), std::string(e.value()));
        EraseAt(i);  // slot i now holds the next entry of the probe sequence, if any
      }
    }
  }
  by_evict_.erase(by_evict_.begin(), end);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace sluice::ops
