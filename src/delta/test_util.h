// Helpers shared by the delta tests: fixture location, temp copies, batch rendering, and a
// FileSystem wrapper that counts reads.
#pragma once

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::delta::testing {

// The Delta tables written by real Spark and delta-rs (scripts/fixtures/, `make fixtures`),
// committed under test/fixtures/delta; FIXTURES.md there says what each must read as.
inline std::string FixturesDir() { return std::string(SLUICE_SOURCE_DIR) + "/test/fixtures/delta"; }
inline std::string Fixture(const std::string& rel) { return FixturesDir() + "/" + rel; }

// A fresh temporary directory, removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "sluice-delta-XXXXXX").string();
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    char* made = mkdtemp(buf.data());
    path_ = made ? made : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Copies fixture `rel` into `dir`/<basename> with owner write permission (tests change copies,
// never the committed fixtures) and returns the copy's path.
inline std::string CopyFixture(const std::string& rel, const TempDir& dir) {
  namespace sfs = std::filesystem;
  sfs::path src = Fixture(rel);
  sfs::path dst = sfs::path(dir.path()) / src.filename();
  sfs::copy(src, dst, sfs::copy_options::recursive);
  for (auto& e : sfs::recursive_directory_iterator(dst)) {
    sfs::permissions(e.path(),
                     sfs::perms::owner_write | sfs::perms::owner_read |
                         (e.is_directory() ? sfs::perms::owner_exec : sfs::perms::none),
                     sfs::perm_options::add);
  }
  sfs::permissions(dst, sfs::perms::owner_all, sfs::perm_options::add);
  return dst.string();
}

// Every row as "v1|v2|..." (NULL for null), in the batch's column order, sorted.
inline std::vector<std::string> Rows(const engine::Batch& batch,
                                     const std::vector<std::string>& columns = {}) {
  std::vector<size_t> idx;
  if (columns.empty()) {
    for (size_t c = 0; c < batch.num_columns(); ++c) idx.push_back(c);
  } else {
    for (const std::string& name : columns) {
      auto i = batch.ColumnIndex(name);
      EXPECT_TRUE(i.has_value()) << "no column " << name;
      if (i) idx.push_back(*i);
    }
  }
  std::vector<std::string> out;
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    std::string row;
    for (size_t k = 0; k < idx.size(); ++k) {
      if (k > 0) row += "|";
      auto v = batch.GetString(r, idx[k]);
      row += v ? *v : "NULL";
    }
    out.push_back(row);
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

inline std::vector<std::string> ColumnNames(const engine::Batch& batch) {
  std::vector<std::string> out;
  for (const auto& f : batch.schema()) out.push_back(f.name);
  return out;
}

// Forwards to another FileSystem, counts ReadFile calls per path and logs the calls that make
// writes durable, in order: "create <path>" (CreateIfAbsent), "sync <path>" (SyncFile),
// "syncdir <dir>" (SyncDirectory), "rename <to>" (RenameNoReplace). Two-phase creates use the
// FileSystem defaults, so they log "create <path>" when published.
class CountingFileSystem : public fs::FileSystem {
 public:
  explicit CountingFileSystem(std::shared_ptr<fs::FileSystem> base) : base_(std::move(base)) {}
  Status CreateIfAbsent(const std::string& p, std::string_view d,
                        const fs::WriteOptions& o) override {
    Log("create " + p);
    return base_->CreateIfAbsent(p, d, o);
  }
  Status AtomicReplace(const std::string& p, std::string_view d,
                       const fs::WriteOptions& o) override {
    return base_->AtomicReplace(p, d, o);
  }
  Result<std::string> ReadFile(const std::string& p) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      reads_[p]++;
    }
    return base_->ReadFile(p);
  }
  Result<std::vector<fs::FileInfo>> List(const std::string& d, std::string_view prefix) override {
    auto out = base_->List(d, prefix);
    if (out.ok()) {
      std::lock_guard<std::mutex> l(mu_);
      for (const auto& f : *out) listed_.insert(f.path.substr(f.path.find_last_of('/') + 1));
    }
    return out;
  }
  Result<std::vector<fs::FileInfo>> ListRecursive(const std::string& d) override {
    return base_->ListRecursive(d);
  }
  Result<fs::FileInfo> Stat(const std::string& p) override { return base_->Stat(p); }
  Result<bool> Exists(const std::string& p) override { return base_->Exists(p); }
  Status DeleteFile(const std::string& p) override { return base_->DeleteFile(p); }
  Status DeleteRecursive(const std::string& d) override { return base_->DeleteRecursive(d); }
  Status CreateDirectories(const std::string& d) override { return base_->CreateDirectories(d); }
  Status RenameNoReplace(const std::string& f, const std::string& t) override {
    Log("rename " + t);
    return base_->RenameNoReplace(f, t);
  }
  Status SyncFile(const std::string& p) override {
    Log("sync " + p);
    return base_->SyncFile(p);
  }
  Status SyncDirectory(const std::string& d) override {
    Log("syncdir " + d);
    return base_->SyncDirectory(d);
  }
  Status SetModificationTime(const std::string& p, int64_t m) override {
    return base_->SetModificationTime(p, m);
  }

  // Names of the entries List returned since the last Reset.
  std::set<std::string> listed() const {
    std::lock_guard<std::mutex> l(mu_);
    return listed_;
  }
  std::map<std::string, int> reads() const {
    std::lock_guard<std::mutex> l(mu_);
    return reads_;
  }
  void Reset() {
    std::lock_guard<std::mutex> l(mu_);
    reads_.clear();
    listed_.clear();
    events_.clear();
  }
  std::vector<std::string> events() const {
    std::lock_guard<std::mutex> l(mu_);
    return events_;
  }

 private:
  void Log(std::string event) {
    std::lock_guard<std::mutex> l(mu_);
    events_.push_back(std::move(event));
  }

  std::shared_ptr<fs::FileSystem> base_;
  mutable std::mutex mu_;
  std::map<std::string, int> reads_;
  std::set<std::string> listed_;
  std::vector<std::string> events_;
};

}  // namespace sluice::delta::testing
