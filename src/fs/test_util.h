// Test helpers for code that uses the file system. Header-only; for tests only.
#pragma once

#include <stdlib.h>

#include <string>

#include "fs/local_file_system.h"

namespace sluice::fs {

// A fresh directory under $TMPDIR (default /tmp), removed with everything in it on destruction.
// Not copyable. path() is empty if the directory could not be created (the test then fails on
// its first use).
class ScopedTempDir {
 public:
  explicit ScopedTempDir(const std::string& tag = "sluice") {
    const char* tmp = getenv("TMPDIR");
    std::string pattern = JoinPath(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", tag + "-XXXXXX");
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScopedTempDir() {
    if (!path_.empty()) {
      Status st = LocalFileSystem()->DeleteRecursive(path_);
      (void)st;
    }
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Join(std::string_view name) const { return JoinPath(path_, name); }

 private:
  std::string path_;
};

}  // namespace sluice::fs
