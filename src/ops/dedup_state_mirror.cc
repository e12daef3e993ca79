#include "ops/dedup_state_mirror.h"

#include <algorithm>
#include <functional>

namespace sluice::ops {

namespace {
constexpr uint8_t kRowVersion = 0x01;  // docs/formats/row-codec.md: row := version value*
constexpr uint8_t kNullTag = 0x00;
constexpr uint8_t kValueTag = 0x01;
constexpr int64_t kBucketMicros = 1'000'000;
}  // namespace

std::string EncodeDedupStateTime(std::optional<int64_t> micros) {
  std::string out;
  out.push_back(static_cast<char>(kRowVersion));
  if (!micros.has_value()) {
    out.push_back(static_cast<char>(kNullTag));
    return out;
  }
  out.push_back(static_cast<char>(kValueTag));
  // Signed 8: big-endian with the sign bit flipped, so that memcmp order is numeric order.
  const uint64_t bits = static_cast<uint64_t>(*micros) ^ (uint64_t{1} << 63);
  for (int shift = 56; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((bits >> shift) & 0xFF));
  }
  return out;
}

Result<std::optional<int64_t>> DecodeDedupStateTime(std::string_view value) {
  auto byte = [&](size_t i) { return static_cast<uint8_t>(value[i]); };
  if (value.size() == 2 && byte(0) == kRowVersion && byte(1) == kNullTag) {
    return std::optional<int64_t>();
  }
  if (value.size() != 10 || byte(0) != kRowVersion || byte(1) != kValueTag) {
    return Status::Corruption("deduplication state value of " + std::to_string(value.size()) +
                              " bytes is not an encoded BIGINT (row codec)");
  }
  uint64_t bits = 0;
  for (size_t i = 2; i < 10; ++i) bits = (bits << 8) | byte(i);
  return std::optional<int64_t>(static_cast<int64_t>(bits ^ (uint64_t{1} << 63)));
}

void DedupStateMirror::Clear() {
  std::vector<uint64_t>().swap(hashes_);
  std::vector<std::string>().swap(keys_);
  by_time_.clear();
  size_ = 0;
  indexed_ = 0;
  heap_bytes_ = 0;
}

Status DedupStateMirror::Load(state::StateIterator& it, bool timed, size_t max_bytes, bool* fits,
                              int64_t* count) {
  Clear();
  *fits = true;
  *count = 0;
  for (; it.Valid(); it.Next()) {
    ++*count;
    if (!*fits) continue;
    std::optional<int64_t> evict;
    if (timed) {
      auto decoded = DecodeDedupStateTime(it.value());
      if (!decoded.ok()) {
        Clear();
        return decoded.status();
      }
      evict = *decoded;
    }
    Insert(it.key(), evict);
    if (bytes() > max_bytes) {
      *fits = false;
      Clear();
    }
  }
  Status st = it.status();
  if (!st.ok()) Clear();
  return st;
}

uint64_t DedupStateMirror::HashOf(std::string_view key) {
  const uint64_t h = std::hash<std::string_view>{}(key);
  return h == 0 ? 1 : h;
}

size_t DedupStateMirror::Probe(std::string_view key, uint64_t hash) const {
  const size_t mask = hashes_.size() - 1;
  for (size_t i = static_cast<size_t>(hash) & mask;; i = (i + 1) & mask) {
    const uint64_t h = hashes_[i];
    if (h == 0 || (h == hash && keys_[i] == key)) return i;
  }
}

bool DedupStateMirror::Contains(std::string_view key) const {
  if (size_ == 0) return false;
  return hashes_[Probe(key, HashOf(key))] != 0;
}

void DedupStateMirror::Prefetch(uint64_t hash) const {
  if (hashes_.empty()) return;
  const size_t i = static_cast<size_t>(hash) & (hashes_.size() - 1);
  __builtin_prefetch(&hashes_[i]);
  __builtin_prefetch(&keys_[i]);
}

void DedupStateMirror::Grow() {
  std::vector<uint64_t> old_hashes;
  std::vector<std::string> old_keys;
  old_hashes.swap(hashes_);
  old_keys.swap(keys_);
  const size_t capacity = old_hashes.empty() ? 1024 : old_hashes.size() * 2;
  hashes_.assign(capacity, 0);
  keys_.resize(capacity);
  const size_t mask = capacity - 1;
  for (size_t j = 0; j < old_hashes.size(); ++j) {
    if (old_hashes[j] == 0) continue;
    size_t i = static_cast<size_t>(old_hashes[j]) & mask;
    while (hashes_[i] != 0) i = (i + 1) & mask;
    hashes_[i] = old_hashes[j];
    keys_[i] = std::move(old_keys[j]);
  }
}

bool DedupStateMirror::Insert(std::string_view key, uint64_t hash,
                              std::optional<int64_t> evict_us) {
  // Load factor at most 1/2: an insertion of a new key (the common case) probes ~2.5 slots.
  if ((size_ + 1) * 2 > hashes_.size()) Grow();
  const size_t i = Probe(key, hash);
  if (hashes_[i] != 0) return false;
  hashes_[i] = hash;
  keys_[i].assign(key);
  ++size_;
  heap_bytes_ += HeapBytes(keys_[i]);
  if (evict_us.has_value()) {
    by_time_[Bucket(*evict_us)].push_back(Timed{*evict_us, std::string(key)});
    ++indexed_;
    heap_bytes_ += HeapBytes(keys_[i]);
  }
  return true;
}

void DedupStateMirror::EraseAt(size_t slot) {
  // Backward-shift deletion: move later entries of the probe run into the hole, so that lookups
  // never need tombstones.
  const size_t mask = hashes_.size() - 1;
  heap_bytes_ -= HeapBytes(keys_[slot]);
  size_t hole = slot;
  for (size_t j = (hole + 1) & mask;; j = (j + 1) & mask) {
    const uint64_t h = hashes_[j];
    if (h == 0) break;
    const size_t home = static_cast<size_t>(h) & mask;
    // The entry at j may move to the hole unless its home is cyclically within (hole, j].
    const bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (stays) continue;
    hashes_[hole] = h;
    keys_[hole] = std::move(keys_[j]);
    hole = j;
  }
  hashes_[hole] = 0;
  std::string().swap(keys_[hole]);
  --size_;
}

std::vector<std::string> DedupStateMirror::TakeExpired(int64_t threshold_us) {
  std::vector<std::string> out;
  const int64_t last = Bucket(threshold_us);
  for (auto b = by_time_.begin(); b != by_time_.end() && b->first <= last;) {
    std::vector<Timed>& entries = b->second;
    size_t kept = 0;
    constexpr size_t kAhead = 16;  // prefetch distance (see Insert)
    for (size_t e = 0; e < entries.size(); ++e) {
      if (e + kAhead < entries.size()) Prefetch(HashOf(entries[e + kAhead].key));
      if (entries[e].evict_us > threshold_us) {  // only in the threshold's own bucket
        if (kept != e) entries[kept] = std::move(entries[e]);
        ++kept;
        continue;
      }
      const uint64_t hash = HashOf(entries[e].key);
      const size_t i = Probe(entries[e].key, hash);
      if (hashes_[i] != 0) EraseAt(i);
      heap_bytes_ -= HeapBytes(entries[e].key);
      --indexed_;
      out.push_back(std::move(entries[e].key));
    }
    entries.resize(kept);
    b = entries.empty() ? by_time_.erase(b) : std::next(b);
  }
  return out;
}

void DedupStateMirror::ForEachInKeyOrder(
    bool timed, const std::function<void(std::string_view, std::string_view)>& emit) const {
  struct Entry {
    std::string_view key;
    std::optional<int64_t> evict_us;
  };
  std::vector<Entry> entries;
  entries.reserve(size_);
  if (timed) {
    for (const auto& [bucket, timed_entries] : by_time_) {
      for (const Timed& t : timed_entries) entries.push_back({t.key, t.evict_us});
    }
  }
  if (entries.size() < size_) {
    // The keys without an eviction time are only in the table: those not in the index.
    std::vector<std::string_view> indexed;
    indexed.reserve(entries.size());
    for (const Entry& e : entries) indexed.push_back(e.key);
    std::sort(indexed.begin(), indexed.end());
    for (size_t i = 0; i < hashes_.size(); ++i) {
      if (hashes_[i] == 0 ||
          std::binary_search(indexed.begin(), indexed.end(), std::string_view(keys_[i]))) {
        continue;
      }
      entries.push_back({keys_[i], std::nullopt});
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.key < b.key; });
  for (const Entry& e : entries) {
    if (timed) {
      emit(e.key, EncodeDedupStateTime(e.evict_us));
    } else {
      emit(e.key, kDedupEmptyStateValue);
    }
  }
}

int64_t DedupStateMirror::Bucket(int64_t micros) {
  // Floor division, so that negative times fall in the bucket below zero.
  int64_t q = micros / kBucketMicros;
  if (micros % kBucketMicros < 0) --q;
  return q;
}

size_t DedupStateMirror::HeapBytes(const std::string& s) {
  // Strings longer than the small-string buffer (15 bytes in libstdc++) allocate.
  return s.size() > 15 ? s.size() + 1 + 16 : 0;
}

size_t DedupStateMirror::bytes() const {
  constexpr size_t kBucketOverhead = 96;  // map node + vector header
  return hashes_.size() * (sizeof(uint64_t) + sizeof(std::string)) + indexed_ * sizeof(Timed) +
         by_time_.size() * kBucketOverhead + heap_bytes_;
}

}  // namespace sluice::ops
