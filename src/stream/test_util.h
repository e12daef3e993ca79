// Test helpers for the stream layer. Header-only; for tests only.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "fs/file_system.h"

namespace sluice::stream::testing {

// A FileSystem that forwards to another one and runs a hook before each CreateIfAbsent: tests
// use it to let a "competing writer" act at the exact moment between a reader's check and its
// create.
class InterposingFileSystem final : public fs::FileSystem {
 public:
  using Hook = std::function<void(const std::string& path)>;
  InterposingFileSystem(std::shared_ptr<fs::FileSystem> base, Hook before_create)
      : base_(std::move(base)), before_create_(std::move(before_create)) {}

  Status CreateIfAbsent(const std::string& path, std::string_view data,
                        const fs::WriteOptions& options = {}) override {
    if (before_create_) before_create_(path);
    return base_->CreateIfAbsent(path, data, options);
  }
  Status AtomicReplace(const std::string& path, std::string_view data,
                       const fs::WriteOptions& options = {}) override {
    return base_->AtomicReplace(path, data, options);
  }
  Result<std::string> ReadFile(const std::string& path) override { return base_->ReadFile(path); }
  Result<std::vector<fs::FileInfo>> List(const std::string& dir,
                                         std::string_view name_prefix = "") override {
    return base_->List(dir, name_prefix);
  }
  Result<std::vector<fs::FileInfo>> ListRecursive(const std::string& dir) override {
    return base_->ListRecursive(dir);
  }
  Result<fs::FileInfo> Stat(const std::string& path) override { return base_->Stat(path); }
  Result<bool> Exists(const std::string& path) override { return base_->Exists(path); }
  Status DeleteFile(const std::string& path) override { return base_->DeleteFile(path); }
  Status DeleteRecursive(const std::string& dir) override { return base_->DeleteRecursive(dir); }
  Status CreateDirectories(const std::string& dir) override {
    return base_->CreateDirectories(dir);
  }
  Status RenameNoReplace(const std::string& from, const std::string& to) override {
    return base_->RenameNoReplace(from, to);
  }
  Status SetModificationTime(const std::string& path, int64_t mtime_ms) override {
    return base_->SetModificationTime(path, mtime_ms);
  }

 private:
  std::shared_ptr<fs::FileSystem> base_;
  Hook before_create_;
};

}  // namespace sluice::stream::testing
