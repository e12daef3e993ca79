// The relation names Sluice reserves in the engine's catalog: the tables and views a streaming
// plan registers for one micro-batch (docs/streaming-plan.md). They are spelled here only; the
// planner (plan/), the engine's error messages (errors.cc, which hide them from the user) and the
// layers above build and recognise them through these constants and functions.
//
//   __source_<i>  stream i's batch as read           (plan/incremental_plan.h)
//   __stream_<i>  the view over it (+ event time)    the name a STREAM relation gets in the query
//   __op_output   a stateful operator's output rows  its output SQL reads it
//   __stage_<k>   stage k's output rows              stage k + 1's input SQL reads it
//
// Thread safety: constants and pure functions.
#pragma once

#include <charconv>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::engine {

inline constexpr std::string_view kSourceTablePrefix = "__source_";
inline constexpr std::string_view kStreamViewPrefix = "__stream_";
inline constexpr std::string_view kStageTablePrefix = "__stage_";
inline constexpr char kOperatorOutputTable[] = "__op_output";

inline std::string SourceTableName(size_t i) {
  return std::string(kSourceTablePrefix) + std::to_string(i);
}
inline std::string StreamViewName(size_t i) {
  return std::string(kStreamViewPrefix) + std::to_string(i);
}
inline std::string StageTableName(size_t k) {
  return std::string(kStageTablePrefix) + std::to_string(k);
}

// True when `name` starts with "__stream_" (ASCII case-insensitively, as the engine resolves
// names), whatever follows.
inline bool HasStreamViewPrefix(std::string_view name) {
  if (name.size() < kStreamViewPrefix.size()) return false;
  for (size_t i = 0; i < kStreamViewPrefix.size(); ++i) {
    char c = name[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kStreamViewPrefix[i]) return false;
  }
  return true;
}

// i for a name "__stream_<i>" (the prefix case-insensitive, then only decimal digits), else
// nullopt.
inline std::optional<size_t> StreamViewIndex(std::string_view name) {
  if (!HasStreamViewPrefix(name)) return std::nullopt;
  std::string_view digits = name.substr(kStreamViewPrefix.size());
  size_t i = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  return i;
}

}  // namespace sluice::engine
