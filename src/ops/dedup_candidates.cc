#include "ops/dedup_candidates.h"

#include <functional>
#include <limits>
#include <string_view>

#include "engine/row_codec.h"

namespace sluice::ops {

Result<std::optional<DedupCandidates>> ComputeDedupCandidates(const engine::Batch& input,
                                                              const DedupCandidateSpec& spec) {
  const size_t n = static_cast<size_t>(input.num_rows());
  if (n >= std::numeric_limits<uint32_t>::max()) return std::optional<DedupCandidates>();
  std::vector<std::optional<int64_t>> et;
  if (spec.event_time_index.has_value()) {
    SLUICE_ASSIGN_OR_RETURN(et, engine::Int64ColumnValues(input, *spec.event_time_index));
  }
  if (spec.order_by_event_time) {
    if (et.size() != n) return std::optional<DedupCandidates>();
    for (const auto& t : et) {
      if (!t.has_value()) return std::optional<DedupCandidates>();  // NULL order: SQL decides
    }
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> keys,
                          engine::EncodeRows(input, spec.key_indexes));

  DedupCandidates out;
  // Open addressing: slot -> (upper 32 bits of the key's hash) << 32 | the best row of its key so
  // far. A key is compared only when the hash bits match, and the slot of the row kAhead rows on
  // is prefetched (the table is larger than the caches).
  constexpr uint64_t kEmpty = std::numeric_limits<uint64_t>::max();  // row 2^32 - 1 never occurs
  constexpr size_t kAhead = 16;
  size_t capacity = 16;
  while (capacity < 2 * n) capacity *= 2;
  const size_t mask = capacity - 1;
  std::vector<uint64_t> hashes(n);
  for (size_t r = 0; r < n; ++r) hashes[r] = std::hash<std::string_view>{}(keys[r]);
  std::vector<uint64_t> table(capacity, kEmpty);
  std::vector<uint8_t> chosen(n, 0);
  for (size_t r = 0; r < n; ++r) {
    if (r + kAhead < n) __builtin_prefetch(&table[hashes[r + kAhead] & mask]);
    if (!et.empty() && et[r].has_value() && *et[r] <= spec.late_threshold_us) {
      ++out.late_rows;
      continue;
    }
    const std::string& key = keys[r];
    const uint64_t tag = hashes[r] >> 32;
    size_t i = hashes[r] & mask;
    while (table[i] != kEmpty &&
           ((table[i] >> 32) != tag || keys[static_cast<uint32_t>(table[i])] != key)) {
      i = (i + 1) & mask;
    }
    if (table[i] == kEmpty) {
      table[i] = tag << 32 | r;
      chosen[r] = 1;
    } else if (spec.order_by_event_time) {
      const size_t best = static_cast<uint32_t>(table[i]);
      if (*et[r] < *et[best]) {
        chosen[best] = 0;
        table[i] = tag << 32 | r;
        chosen[r] = 1;
      }
    }
  }
  std::vector<uint64_t>().swap(table);
  std::vector<uint64_t>().swap(hashes);

  for (size_t r = 0; r < n; ++r) {
    if (!chosen[r]) continue;
    std::optional<int64_t> time;
    switch (spec.state_time) {
      case DedupCandidateSpec::StateTime::kNone:
        break;
      case DedupCandidateSpec::StateTime::kEventTime:
        time = et[r];
        break;
      case DedupCandidateSpec::StateTime::kExpiry: {
        int64_t sum = 0;
        if (__builtin_add_overflow(et[r].value_or(0), spec.expiry_delay_us, &sum)) {
          return std::optional<DedupCandidates>();  // the SQL path reports the overflow
        }
        time = sum;
        break;
      }
    }
    out.rows.push_back(static_cast<int64_t>(r));
    out.keys.push_back(std::move(keys[r]));
    if (spec.state_time != DedupCandidateSpec::StateTime::kNone) out.times.push_back(time);
  }
  return std::optional<DedupCandidates>(std::move(out));
}

}  // namespace sluice::ops
