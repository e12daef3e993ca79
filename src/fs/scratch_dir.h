// A local scratch directory that a killed process does not leave behind for good.
//
// ScratchDir::Make(prefix) creates `$TMPDIR/<prefix>-<pid>-XXXXXX` (TMPDIR unset or empty:
// the system's temporary directory, else /tmp) and removes it, with everything in it, when the
// object is destroyed. A process killed before that leaves its directory; the next Make of the
// same prefix, in any process, first removes every `<prefix>-<pid>-*` whose process no longer
// exists (kill(pid, 0) fails with ESRCH). A directory of a live process, of another user's
// process (EPERM), or with a name that does not parse is left alone. A reused pid keeps a
// leftover until that process ends too: harmless, only space.
//
// Thread safety: Make may be called from any thread (mkdtemp picks unique names; two
// reclaimers racing on one leftover both call remove_all, which tolerates that).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::fs {

class ScratchDir {
 public:
  // `prefix`: letters, digits and '-' (e.g. "sluice-check"). IOError when the directory cannot
  // be made, naming its parent.
  static Result<std::unique_ptr<ScratchDir>> Make(std::string_view prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// The parent of every ScratchDir: $TMPDIR, else the system's temporary directory, else /tmp.
std::string ScratchParent();

// Removes `<parent>/<prefix>-<pid>-*` of processes that no longer exist; the number removed.
int ReclaimDeadScratchDirs(const std::string& parent, std::string_view prefix);

}  // namespace sluice::fs
