#!/usr/bin/env python3
"""scripts/tidy_cache.py's keys: equal for the same sources in two clones, different after any
change clang-tidy's verdict depends on (a header, a comment of the file, a flag, the binary's
version, the checks), empty when the dependency scan fails.

  tidy_cache_test.py REPO_ROOT
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

OWN_FILES = (".clang-tidy", "scripts/tidy_cache.py", "scripts/clang-tidy-check.sh")


def make_clone(repo, base, name):
    """A tree with the cache's own files and a two-file program, built in build/ inside it."""
    root = os.path.join(base, name)
    for own in OWN_FILES:
        os.makedirs(os.path.dirname(os.path.join(root, own)) or root, exist_ok=True)
        shutil.copy(os.path.join(repo, own), os.path.join(root, own))
    os.makedirs(os.path.join(root, "src"))
    os.makedirs(os.path.join(root, "build"))
    write(root, "src/b.h", "inline int B() { return 1; }\n")
    write(root, "src/a.cc", '#include "b.h"\nint A() { return B(); }\n')
    commands(root, ["-O2"])
    return root


def write(root, rel, text):
    with open(os.path.join(root, rel), "w") as f:
        f.write(text)


def commands(root, flags):
    entry = {
        "directory": os.path.join(root, "build"),
        "command": " ".join(["/usr/bin/c++", "-I" + os.path.join(root, "src"), *flags, "-std=c++20",
                             "-o", "src/a.cc.o", "-c", os.path.join(root, "src/a.cc")]),
        "file": os.path.join(root, "src/a.cc"),
    }
    with open(os.path.join(root, "build", "compile_commands.json"), "w") as f:
        json.dump([entry], f)


def key(root, version="clang-tidy 14"):
    env = dict(os.environ, TIDY_VERSION=version)
    done = subprocess.run(
        [sys.executable, os.path.join(root, "scripts/tidy_cache.py"), "key",
         os.path.join(root, "build"), "src/a.cc"],
        env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


failures = []


def expect(what, ok):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def main():
    repo = sys.argv[1]
    with tempfile.TemporaryDirectory() as base:
        one = make_clone(repo, base, "one")
        two = make_clone(repo, base, "clone-two")
        k = key(one)
        expect("a key is 64 hex digits", len(k) == 64 and all(c in "0123456789abcdef" for c in k))
        expect("the same key twice", key(one) == k)
        expect("the same key in another clone of the same sources", key(two) == k)
        expect("another clang-tidy version changes it", key(one, "clang-tidy 16") != k)

        write(two, "src/b.h", "inline int B() { return 2; }\n")
        expect("a changed header changes it", key(two) != k)
        write(two, "src/b.h", "inline int B() { return 1; }\n")
        expect("the header restored gives the key back", key(two) == k)

        write(two, "src/a.cc", '#include "b.h"\nint A() { return B(); }  // NOLINT\n')
        expect("a comment of the file changes it", key(two) != k)
        write(two, "src/a.cc", '#include "b.h"\nint A() { return B(); }\n')

        commands(two, ["-O0"])
        expect("another flag changes it", key(two) != k)
        commands(two, ["-O2"])

        with open(os.path.join(two, ".clang-tidy"), "a") as f:
            f.write("# another check set\n")
        expect("a changed .clang-tidy changes it", key(two) != k)

        os.remove(os.path.join(one, "src/b.h"))
        expect("a failed dependency scan gives no key", key(one) == "")
    if failures:
        print(f"tidy_cache_test: {len(failures)} failed", file=sys.stderr)
        return 1
    print("tidy_cache_test: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
