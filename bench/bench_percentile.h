// The percentile of a benchmark's samples, by two rules (each bench keeps the rule its recorded
// figures were measured with): Percentile, for the benches that report waits and latencies of
// commits (commit_race_bench, group_commit_bench), is the sample at index floor(q * n), clamped
// to the last, of the sorted samples; BatchPercentile, for the micro-batch durations of
// stateful_bench and stream_bench, the sample at index round(q * (n - 1)). q = 1 is the maximum
// for both; 0 when there are no samples. For benchmarks only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sluice::bench {

inline double Percentile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const auto i = static_cast<size_t>(q * static_cast<double>(samples.size()));
  return samples[std::min(samples.size() - 1, i)];
}

inline double BatchPercentile(std::vector<int64_t> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const auto i = static_cast<size_t>(q * static_cast<double>(samples.size() - 1) + 0.5);
  return static_cast<double>(samples[std::min(i, samples.size() - 1)]);
}

}  // namespace sluice::bench
