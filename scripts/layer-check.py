#!/usr/bin/env python3
"""Checks that docs/architecture.md's description of the layers is true of src/.

  scripts/layer-check.py [ROOT]      (default: the repository this script is in)

The layer order is read from the code block under "## Layers" of docs/architecture.md (one
"<folder>/ ..." line per layer, top to bottom), so the document is the one place it is written.
Every file under src/ (tests included) must then:
  - belong to a layer the document names (its first folder under src/);
  - include, of Sluice's own headers ("<layer>/..."), only its own layer's and those below it;
  - leave DuckDB's headers to src/engine/ (no #include of duckdb outside it).
Every header under src/ and include/ must open with its contract (a comment on its first line).

Prints one line per violation and exits 1 when there is any; prints the count of files checked
and exits 0 otherwise.
"""
import os
import re
import sys


def layer_order(root):
    doc = open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8").read()
    m = re.search(r"^## Layers\n.*?^```\n(.*?)^```", doc, re.S | re.M)
    if not m:
        sys.exit("layer-check: docs/architecture.md has no code block under '## Layers'")
    order = []
    for line in m.group(1).splitlines():
        lm = re.match(r"([a-z_]+)/\s", line)
        if not lm:
            sys.exit("layer-check: a line of the layer block is not '<folder>/ ...': " + line)
        order.append(lm.group(1))
    return order


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.abspath(root)
    order = layer_order(root)
    height = {name: len(order) - i for i, name in enumerate(order)}  # larger = higher up
    include_re = re.compile(r'\s*#\s*include\s+["<]([A-Za-z0-9_]+)/')
    duckdb_re = re.compile(r'\s*#\s*include\s+["<]duckdb')
    problems = []
    checked = 0
    for top in ("src", "include"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                checked += 1
                lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
                if name.endswith(".h") and not lines[0].startswith("//"):
                    problems.append(f"{rel}:1: a header opens with its contract (a comment)")
                if top != "src":
                    continue
                parts = rel.split(os.sep)
                if len(parts) < 3:
                    continue  # src/CMakeLists.txt and the like
                layer = parts[1]
                if layer not in height:
                    problems.append(f"{rel}: folder src/{layer}/ is not a layer of docs/architecture.md")
                    continue
                for n, line in enumerate(lines, 1):
                    if duckdb_re.match(line) and layer != "engine":
                        problems.append(f"{rel}:{n}: only src/engine/ includes DuckDB: {line.strip()}")
                    m = include_re.match(line)
                    if m and m.group(1) in height and height[m.group(1)] > height[layer]:
                        problems.append(f"{rel}:{n}: {layer}/ includes the layer above it, "
                                        f"{m.group(1)}/: {line.strip()}")
    for p in problems:
        print(p)
    if problems:
        print(f"layer-check: {len(problems)} problems in {checked} files "
              f"(layers, top to bottom: {' '.join(order)})")
        return 1
    print(f"layer-check: {checked} files follow the {len(order)} layers of docs/architecture.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
