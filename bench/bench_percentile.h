// The percentile of a benchmark's samples, by one rule for the benches that report waits and
// latencies of commits (commit_race_bench, group_commit_bench): the sample at index
// floor(q * n), clamped to the last, of the sorted samples (q = 1 is the maximum); 0 when there
// are none. For benchmarks only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace sluice::bench {

inline double Percentile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const auto i = static_cast<size_t>(q * static_cast<double>(samples.size()));
  return samples[std::min(samples.size() - 1, i)];
}

}  // namespace sluice::bench
