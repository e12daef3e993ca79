// The in-memory backend: a std::map with bytewise order (std::string compares like memcmp).
#include <map>

#include "state/kv_backend.h"

namespace sluice::state {
namespace {

using Map = std::map<std::string, std::string, std::less<>>;

// Survives modifications of the map: it remembers the current key and re-seeks after any
// modification (the map's modification counter changed), so an erased current entry is safe.
class MemoryIterator final : public StateIterator {
 public:
  MemoryIterator(const Map* map, const uint64_t* mods, std::string begin,
                 std::optional<std::string> end)
      : map_(map), mods_(mods), begin_(std::move(begin)), end_(std::move(end)) {
    it_ = map_->lower_bound(begin_);
    seen_mods_ = *mods_;
    Settle();
  }
  bool Valid() const override { return valid_; }
  std::string_view key() const override { return it_->first; }
  std::string_view value() const override { return it_->second; }
  void Next() override {
    if (*mods_ != seen_mods_) {
      it_ = map_->upper_bound(current_);
      seen_mods_ = *mods_;
    } else {
      ++it_;
    }
    Settle();
  }
  void Seek(std::string_view target) override {
    it_ = target < begin_ ? map_->lower_bound(begin_) : map_->lower_bound(target);
    seen_mods_ = *mods_;
    Settle();
  }
  Status status() const override { return Status::OK(); }

 private:
  void Settle() {
    valid_ = it_ != map_->end() && (!end_ || it_->first < *end_);
    if (valid_) current_ = it_->first;
  }
  const Map* map_;
  const uint64_t* mods_;
  std::string begin_;
  std::optional<std::string> end_;
  Map::const_iterator it_;
  uint64_t seen_mods_ = 0;
  std::string current_;
  bool valid_ = false;
};

class MemoryBackend final : public KvBackend {
 public:
  Result<std::optional<std::string>> Get(std::string_view key) override {
    auto it = map_.find(key);
    if (it == map_.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }
  Result<std::vector<std::optional<std::string>>> MultiGet(
      const std::vector<std::string_view>& keys) override {
    std::vector<std::optional<std::string>> out(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      if (auto it = map_.find(keys[i]); it != map_.end()) out[i] = it->second;
    }
    return out;
  }
  Status Flush() override { return Status::OK(); }  // writes are never buffered
  Status Put(std::string_view key, std::string_view value) override {
    auto it = map_.find(key);
    if (it == map_.end()) {
      bytes_ += key.size() + value.size() + kNodeOverhead;
      map_.emplace(std::string(key), std::string(value));
      ++mods_;  // an insert may land before an iterator's position: re-seek
    } else {
      bytes_ += value.size();
      bytes_ -= it->second.size();
      it->second.assign(value);
    }
    return Status::OK();
  }
  Status Delete(std::string_view key) override {
    auto it = map_.find(key);
    if (it != map_.end()) {
      bytes_ -= it->first.size() + it->second.size() + kNodeOverhead;
      map_.erase(it);
      ++mods_;
    }
    return Status::OK();
  }
  Result<std::unique_ptr<StateIterator>> NewIterator(std::string begin,
                                                     std::optional<std::string> end) override {
    return std::unique_ptr<StateIterator>(
        new MemoryIterator(&map_, &mods_, std::move(begin), std::move(end)));
  }
  Status Clear() override {
    map_.clear();
    bytes_ = 0;
    ++mods_;
    return Status::OK();
  }
  Status Apply(std::string_view file_bytes) override {
    return ForEachStateRecord(file_bytes, [this](const StateRecord& r) {
      return r.is_delete ? Delete(r.key) : Put(r.key, r.value);
    });
  }
  int64_t CountKeysCheaply() override { return static_cast<int64_t>(map_.size()); }
  Result<int64_t> CountKeysExactly() override { return CountKeysCheaply(); }
  bool count_is_exact() const override { return true; }
  int64_t MemoryBytes() override { return bytes_; }
  void AddCustomMetrics(std::map<std::string, int64_t>*) override {}

 private:
  // std::map node: three pointers, color, two std::string headers (rounded).
  static constexpr int64_t kNodeOverhead = 32 + 2 * sizeof(std::string);
  Map map_;
  uint64_t mods_ = 0;
  int64_t bytes_ = 0;
};

}  // namespace

std::unique_ptr<KvBackend> NewMemoryBackend() { return std::make_unique<MemoryBackend>(); }

std::optional<std::string> PrefixSuccessor(std::string_view prefix) {
  std::string s(prefix);
  while (!s.empty()) {
    auto& c = reinterpret_cast<unsigned char&>(s.back());
    if (c != 0xFF) {
      ++c;
      return s;
    }
    s.pop_back();
  }
  return std::nullopt;
}

}  // namespace sluice::state
