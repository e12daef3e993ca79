// The byte layout of aggregation state entries (docs/streaming-plan.md §4):
//   key   = [u32 BE length of the group key][group key: engine row codec of the plain keys]
//           [u64 BE window start in microseconds, sign bit flipped (so keys sort by start)]
//   value = [i64 BE eviction time in microseconds (window end / event-time key; INT64_MAX when
//           the row never expires)][row codec of the whole state row]
// All sessions / windows of one group key share the key prefix, so a PrefixScan finds them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::ops {

inline constexpr int64_t kNeverEvicted = INT64_MAX;

std::string StateKeyPrefix(std::string_view group_key);
std::string StateKey(std::string_view group_key, int64_t start_us);
std::string StateValue(int64_t evict_us, std::string_view row);

struct ParsedStateValue {
  int64_t evict_us = kNeverEvicted;
  std::string_view row;
};
// Corruption for a value shorter than its header.
Result<ParsedStateValue> ParseStateValue(std::string_view value);

}  // namespace sluice::ops
