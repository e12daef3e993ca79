#!/usr/bin/env python3
"""The README's examples are checked: the output it shows is the output produced.

  check_readme.py README.md SLUICE_BIN EXAMPLE_BIN EXAMPLE_SOURCE [--show]

- Every ```console block of the README is a session: a line starting with "$ " is a command
  (continued on the next lines while it ends with a backslash or bash cannot parse it, so a
  quoted SQL text may span lines),
  the lines after it up to the next command are its output. All sessions run in document order,
  in one fresh temporary directory, with `sluice` and the example program on PATH (under their
  own names), TZ=UTC and LC_ALL=C.UTF-8; each command's stdout and stderr together must equal
  the output shown (trailing spaces of a line ignored), and it must exit with 0 (the README
  shows a failing command with `|| echo "exit code $?"`).
- The README's one ```cpp block must be EXAMPLE_SOURCE (examples/tour_spend.cc) exactly; that
  file is built by CMake and run by the session that shows it.
- --show prints what each command printed, for updating the README after a deliberate change.

Exits 1 with a diff per mismatch; fails too when the README has no session or no C++ block.
"""
import difflib
import os
import re
import subprocess
import sys
import tempfile


def fenced_blocks(text):
    """(info string, content, first line number) of each ``` fenced block."""
    blocks, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = re.match(r"^```(\S*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        start, body = i + 1, []
        i += 1
        while i < len(lines) and lines[i] != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise SystemExit(f"README.md:{start}: fenced block not closed")
        blocks.append((m.group(1), "\n".join(body) + "\n", start + 1))
        i += 1
    return blocks


def parses(command):
    return subprocess.run(["bash", "-n", "-c", command], capture_output=True).returncode == 0


def session_commands(content, first_line):
    """[(line number, command, expected output lines)] of one console block."""
    out, lines, i = [], content.rstrip("\n").split("\n"), 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise SystemExit(f"README.md:{first_line + i}: output before any command in a console block")
        at, command = first_line + i, lines[i][2:]
        i += 1
        while command.endswith("\\") or not parses(command):
            if i == len(lines) or lines[i].startswith("$ "):
                raise SystemExit(f"README.md:{at}: command does not parse: {command}")
            command += "\n" + lines[i]
            i += 1
        expected = []
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        out.append((at, command, expected))
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "--show"]
    show = "--show" in sys.argv[1:]
    if len(args) != 4:
        raise SystemExit(__doc__)
    readme, sluice_bin, example_bin, example_source = map(os.path.abspath, args)
    blocks = fenced_blocks(open(readme, encoding="utf-8").read())
    failures = 0

    cpp = [b for b in blocks if b[0] == "cpp"]
    want_source = open(example_source, encoding="utf-8").read()
    if len(cpp) != 1:
        print(f"FAIL README.md has {len(cpp)} ```cpp blocks; want exactly one, {example_source}")
        failures += 1
    elif cpp[0][1] != want_source:
        print(f"FAIL README.md:{cpp[0][2]}: the C++ block is not {example_source}:")
        sys.stdout.writelines(difflib.unified_diff(
            want_source.splitlines(True), cpp[0][1].splitlines(True), example_source, "README.md"))
        failures += 1

    sessions = [b for b in blocks if b[0] == "console"]
    if not sessions:
        print("FAIL README.md has no ```console session")
        return 1
    commands = [c for _, content, line in sessions for c in session_commands(content, line)]
    with tempfile.TemporaryDirectory(prefix="sluice-readme-") as tmp:
        bin_dir, work = os.path.join(tmp, "bin"), os.path.join(tmp, "tour")
        os.mkdir(bin_dir)
        os.mkdir(work)
        os.symlink(sluice_bin, os.path.join(bin_dir, "sluice"))
        os.symlink(example_bin, os.path.join(bin_dir, os.path.basename(example_bin)))
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""),
                   TZ="UTC", LC_ALL="C.UTF-8", HOME=tmp)
        for at, command, expected in commands:
            run = subprocess.run(["bash", "-c", command], cwd=work, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            got = run.stdout.rstrip("\n").split("\n") if run.stdout else []
            if show:
                print("$ " + command)
                print("\n".join(got))
            norm = lambda ls: [l.rstrip() for l in ls]
            if run.returncode != 0:
                print(f"FAIL README.md:{at}: exit {run.returncode}: {command}")
                print("\n".join(got))
                failures += 1
            elif norm(got) != norm(expected):
                print(f"FAIL README.md:{at}: output differs: {command}")
                sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(
                    norm(expected), norm(got), "README.md (shown)", "produced", lineterm=""))
                failures += 1
    print(f"{len(commands)} commands in {len(sessions)} sessions, {len(cpp)} C++ block: "
          f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
