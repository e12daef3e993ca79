#include "fs/scratch_dir.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <system_error>

namespace sluice::fs {
namespace {

// Whether the process `pid` is gone for sure (not merely another user's).
bool ProcessIsGone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace

std::string ScratchParent() {
  const char* tmp = getenv("TMPDIR");
  if (tmp != nullptr && *tmp != '\0') return tmp;
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  return ec ? std::string("/tmp") : base.string();
}

int ReclaimDeadScratchDirs(const std::string& parent, std::string_view prefix) {
  const std::string lead = std::string(prefix) + "-";
  int removed = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(parent, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, lead.size(), lead) != 0) continue;
    const char* first = name.data() + lead.size();
    const char* last = name.data() + name.size();
    long pid = 0;
    auto [rest, err] = std::from_chars(first, last, pid);
    if (err != std::errc() || rest == first || rest == last || *rest != '-' || pid <= 0) continue;
    if (pid == static_cast<long>(::getpid()) || !ProcessIsGone(static_cast<pid_t>(pid))) continue;
    std::error_code rm;
    std::filesystem::remove_all(it->path(), rm);
    if (!rm) ++removed;
  }
  return removed;
}

Result<std::unique_ptr<ScratchDir>> ScratchDir::Make(std::string_view prefix) {
  const std::string parent = ScratchParent();
  ReclaimDeadScratchDirs(parent, prefix);
  std::string pattern = (std::filesystem::path(parent) /
                         (std::string(prefix) + "-" + std::to_string(::getpid()) + "-XXXXXX"))
                            .string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Status::IOError("cannot create a scratch directory under " + parent + ": " +
                           std::generic_category().message(errno));
  }
  return std::unique_ptr<ScratchDir>(new ScratchDir(std::move(pattern)));
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace sluice::fs
