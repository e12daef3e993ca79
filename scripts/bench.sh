#!/usr/bin/env bash
# `make bench-all`: runs every benchmark program built under <build>/bench and prints their
# figures, then the Nexmark suite (which `make bench` runs alone).
# bench/RESULTS.md records figures with the command and machine they came from.
set -euo pipefail
BUILD="${1:-build/release}"
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr)"
for bin in "${BUILD}"/bench/*_bench; do
  [[ -x "${bin}" ]] || continue
  echo "== ${bin}"
  "${bin}" --benchmark_min_time=0.5
done
# The Nexmark queries (bench/nexmark): writes the Nexmark table of bench/RESULTS.md.
echo "== Nexmark queries"
scripts/bench_nexmark.sh "${BUILD}/sluice"
