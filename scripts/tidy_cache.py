#!/usr/bin/env python3
"""The clang-tidy result cache of scripts/clang-tidy-check.sh: a file that passed once is not
checked again while nothing its result depends on has changed (as ccache does for compiles).

  tidy_cache.py key BUILD_DIR FILE    prints the file's key (64 hex digits) on stdout
  tidy_cache.py dir                   prints the cache directory

A key is the sha256 of everything clang-tidy's verdict on FILE depends on: the clang-tidy
binary's version (TIDY_VERSION in the environment), .clang-tidy, this script and
clang-tidy-check.sh, FILE's compile command (its output file left out, the checkout's and the
build's directories written as placeholders so that another clone of the same commit gets the
same key) and the path and content of FILE and of every file it includes, as the compiler's
dependency scan (-M) lists them. A NOLINT comment, a header's change or a flag's change therefore
changes the key. Only passes are recorded (an empty file named by the key); a failure is checked
again every time. When the dependency scan fails, the key is left empty and the file is checked.

The cache lives outside the clone: ${SLUICE_CACHE:-${XDG_CACHE_HOME:-~/.cache}/sluice}/clang-tidy.
TIDY_CACHE=0 turns it off (clang-tidy-check.sh then checks every file).
"""

import hashlib
import json
import os
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cache_dir():
    base = os.environ.get("SLUICE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "sluice")
    return os.path.join(base, "clang-tidy")


def compile_entry(build, path):
    target = os.path.normpath(os.path.join(ROOT, path))
    with open(os.path.join(build, "compile_commands.json")) as f:
        for entry in json.load(f):
            if os.path.normpath(os.path.join(entry["directory"], entry["file"])) == target:
                return entry
    return None


def arguments(entry):
    args = entry.get("arguments") or shlex.split(entry["command"])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        out.append(a)
    return out


def placeholders(text, build):
    # The build directory first: it may lie inside the checkout.
    return text.replace(os.path.abspath(build), "<build>").replace(ROOT, "<root>")


def dependencies(entry, args):
    """The files the compile reads (FILE first), or None when the scan fails."""
    scan = [a for a in args if a != "-c"]
    scan[1:1] = ["-M", "-MF", "/dev/stdout"]
    done = subprocess.run(scan, cwd=entry["directory"], capture_output=True, text=True)
    if done.returncode != 0:
        return None
    words = done.stdout.replace("\\\n", " ").split()
    files = [w for w in words[1:] if not w.endswith(":")]  # words[0] is the rule's target
    return [os.path.normpath(os.path.join(entry["directory"], f)) for f in files]


def key(build, path):
    entry = compile_entry(build, path)
    if entry is None:
        return ""
    args = arguments(entry)
    deps = dependencies(entry, args)
    if deps is None:
        return ""
    h = hashlib.sha256()
    h.update(os.environ.get("TIDY_VERSION", "").encode())
    for own in (".clang-tidy", "scripts/tidy_cache.py", "scripts/clang-tidy-check.sh"):
        with open(os.path.join(ROOT, own), "rb") as f:
            h.update(b"\0" + own.encode() + b"\0" + f.read())
    h.update(b"\0args\0" + placeholders("\0".join(args), build).encode())
    for dep in deps:
        try:
            with open(dep, "rb") as f:
                content = f.read()
        except OSError:
            return ""
        h.update(b"\0file\0" + placeholders(dep, build).encode() + b"\0")
        h.update(hashlib.sha256(content).digest())
    return h.hexdigest()


def main(argv):
    if len(argv) == 2 and argv[1] == "dir":
        print(cache_dir())
        return 0
    if len(argv) == 4 and argv[1] == "key":
        print(key(argv[2], argv[3]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
