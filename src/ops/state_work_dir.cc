#include "ops/state_work_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "fs/file_system.h"
#include "fs/local_cache.h"

namespace sluice::ops {

std::string CheckpointWorkDir(std::string_view checkpoint_root) {
  // A checkpoint on object storage: RocksDB needs a local disk (fs/local_cache.h).
  return fs::JoinPath(fs::LocalCacheDirFor(checkpoint_root), kCheckpointWorkDirName);
}

Result<std::string> CreateStateWorkDir(std::string_view checkpoint_root, std::string_view kind) {
  std::string parent;
  if (checkpoint_root.empty()) {
    const char* tmp = getenv("TMPDIR");
    parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  } else {
    parent = CheckpointWorkDir(checkpoint_root);
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) {
      return Status::IOError("creating the state working directory " + parent + ": " +
                             ec.message());
    }
  }
  std::string pattern = fs::JoinPath(parent, std::string(kind) + "-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Status::FromErrno(errno, "creating the state working directory " + pattern);
  }
  return pattern;
}

}  // namespace sluice::ops
