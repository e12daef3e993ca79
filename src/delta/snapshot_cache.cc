#include "delta/snapshot_cache.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace sluice::delta {
namespace {

struct Entry {
  std::weak_ptr<fs::FileSystem> fs;
  const fs::FileSystem* fs_raw = nullptr;
  std::string root;
  std::shared_ptr<const Snapshot> snapshot;
  fs::FileInfo commit;  // the commit file of snapshot->version, as it was when cached
  uint64_t last_used = 0;
};

struct Cache {
  std::mutex mu;
  std::vector<Entry> entries;
  uint64_t clock = 0;
};

Cache& TheCache() {
  static Cache* cache = new Cache();  // never destroyed: used until the process exits
  return *cache;
}

// The commit file of the snapshot's own version, when its info is known.
const fs::FileInfo* CommitFileOf(const Snapshot& snapshot) {
  for (auto it = snapshot.segment.commits.rbegin(); it != snapshot.segment.commits.rend(); ++it) {
    if (it->name.version != snapshot.version) continue;
    if (it->info.path.empty() || it->info.size <= 0 || it->info.mtime_ms <= 0) return nullptr;
    return &it->info;
  }
  return nullptr;
}

std::vector<Entry>::iterator Find(Cache& cache, const fs::FileSystem* fs, const std::string& root) {
  return std::find_if(cache.entries.begin(), cache.entries.end(), [&](const Entry& e) {
    return e.fs_raw == fs && e.root == root && !e.fs.expired();
  });
}

}  // namespace

std::shared_ptr<const Snapshot> LookupCachedSnapshot(const std::shared_ptr<fs::FileSystem>& fs,
                                                     const std::string& table_root) {
  if (fs == nullptr) return nullptr;
  Cache& cache = TheCache();
  std::shared_ptr<const Snapshot> snapshot;
  fs::FileInfo commit;
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = Find(cache, fs.get(), table_root);
    if (it == cache.entries.end()) return nullptr;
    it->last_used = ++cache.clock;
    snapshot = it->snapshot;
    commit = it->commit;
  }
  Result<fs::FileInfo> now = fs->Stat(commit.path);
  if (now.ok() && now->size == commit.size && now->mtime_ms == commit.mtime_ms) return snapshot;
  std::lock_guard<std::mutex> lock(cache.mu);
  auto it = Find(cache, fs.get(), table_root);
  if (it != cache.entries.end() && it->snapshot == snapshot) cache.entries.erase(it);
  return nullptr;
}

void CacheSnapshot(const std::shared_ptr<fs::FileSystem>& fs,
                   std::shared_ptr<const Snapshot> snapshot) {
  if (fs == nullptr || snapshot == nullptr) return;
  const fs::FileInfo* commit = CommitFileOf(*snapshot);
  if (commit == nullptr) return;
  Cache& cache = TheCache();
  std::lock_guard<std::mutex> lock(cache.mu);
  // Entries of destroyed file systems are never found again: drop them.
  std::erase_if(cache.entries, [](const Entry& e) { return e.fs.expired(); });
  auto it = Find(cache, fs.get(), snapshot->table_root);
  if (it == cache.entries.end()) {
    if (cache.entries.size() >= kMaxCachedTables) {
      cache.entries.erase(std::min_element(
          cache.entries.begin(), cache.entries.end(),
          [](const Entry& a, const Entry& b) { return a.last_used < b.last_used; }));
    }
    cache.entries.push_back(Entry{fs, fs.get(), snapshot->table_root, nullptr, {}, 0});
    it = cache.entries.end() - 1;
  }
  it->commit = *commit;
  it->snapshot = std::move(snapshot);
  it->last_used = ++cache.clock;
}

void ClearSnapshotCache() {
  Cache& cache = TheCache();
  std::lock_guard<std::mutex> lock(cache.mu);
  cache.entries.clear();
}

}  // namespace sluice::delta
