#!/usr/bin/env bash
# Clang's thread-safety analysis over every source that takes a sluice::Mutex (common/mutex.h):
# each file is compiled syntax-only with its own flags from the build's compile_commands.json,
# with -Wthread-safety as an error. The lock contracts in the headers (SLUICE_GUARDED_BY,
# SLUICE_REQUIRES, SLUICE_EXCLUDES) are then checked, not just written.
#   scripts/thread-safety-check.sh [BUILD_DIR]   (default build/release; needs clang++, e.g.
#                                                 Debian's clang-14, and a configured build)
# First it proves the check bites: a probe with a write outside the lock must be refused.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build/release}"
clang="$(command -v clang++ || command -v clang++-16 || command -v clang++-15 || command -v clang++-14 || true)"
[[ -n "${clang}" ]] || { echo "thread-safety-check: clang++ is needed (apt-get install clang-14)" >&2; exit 1; }
[[ -f "${build}/compile_commands.json" ]] ||
  { echo "thread-safety-check: ${build}/compile_commands.json is missing: configure the build first" >&2; exit 1; }
exec python3 - "${clang}" "${build}/compile_commands.json" <<'PY'
import json, os, shlex, subprocess, sys, tempfile

clang, db = sys.argv[1], sys.argv[2]
flags = ["-fsyntax-only", "-Wthread-safety", "-Werror=thread-safety", "-Wno-unknown-warning-option",
         "-Wno-unused-command-line-argument"]
root = os.getcwd()

def clang_args(entry):
    args, skip = [], False
    for a in shlex.split(entry["command"])[1:]:
        if skip:
            skip = False
        elif a in ("-o", "-c"):
            skip = True
        elif not a.startswith(("-fsanitize", "-Werror")):
            args.append(a)
    return args

probe = """#include "common/mutex.h"
class Probe { sluice::Mutex mu_; int n_ SLUICE_GUARDED_BY(mu_) = 0;
 public: void Bad() { ++n_; } };
"""
with tempfile.NamedTemporaryFile("w", suffix=".cc") as f:
    f.write(probe)
    f.flush()
    r = subprocess.run([clang, "-std=c++20", "-I" + os.path.join(root, "src"), *flags, f.name],
                       capture_output=True, text=True)
    if r.returncode == 0 or "requires holding mutex" not in r.stderr:
        sys.exit("thread-safety-check: the probe was not refused; the analysis is not running:\n"
                 + r.stderr)

def uses_mutex(path):
    try:
        text = open(path, errors="ignore").read()
    except OSError:
        return False
    if "MutexLock" in text or "SLUICE_GUARDED_BY" in text:
        return True
    header = os.path.splitext(path)[0] + ".h"
    return os.path.exists(header) and "common/mutex.h" in open(header, errors="ignore").read()

entries = [e for e in json.load(open(db)) if e["file"].startswith(os.path.join(root, "src"))
           and uses_mutex(e["file"])]
failed = 0
for e in sorted(entries, key=lambda e: e["file"]):
    r = subprocess.run([clang, *flags, *clang_args(e), e["file"]], cwd=e["directory"],
                       capture_output=True, text=True)
    name = os.path.relpath(e["file"], root)
    if r.returncode != 0:
        failed += 1
        print(f"FAIL {name}\n{r.stderr}")
print(f"{len(entries) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
