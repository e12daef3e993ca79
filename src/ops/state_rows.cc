#include "ops/state_rows.h"

namespace sluice::ops {
namespace {

void PutU64(std::string* out, uint64_t v) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetU64(std::string_view s) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(s[static_cast<size_t>(i)]);
  return v;
}

}  // namespace

std::string StateKeyPrefix(std::string_view group_key) {
  std::string out;
  uint32_t n = static_cast<uint32_t>(group_key.size());
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out.append(group_key);
  return out;
}

std::string StateKey(std::string_view group_key, int64_t start_us) {
  std::string out = StateKeyPrefix(group_key);
  PutU64(&out, static_cast<uint64_t>(start_us) ^ (uint64_t{1} << 63));
  return out;
}

std::string StateValue(int64_t evict_us, std::string_view row) {
  std::string out;
  out.reserve(8 + row.size());
  PutU64(&out, static_cast<uint64_t>(evict_us));
  out.append(row);
  return out;
}

Result<ParsedStateValue> ParseStateValue(std::string_view value) {
  if (value.size() < 8) {
    return Status::Corruption("aggregation state value of " + std::to_string(value.size()) +
                              " bytes is shorter than its 8-byte header");
  }
  ParsedStateValue out;
  out.evict_us = static_cast<int64_t>(GetU64(value));
  out.row = value.substr(8);
  return out;
}

}  // namespace sluice::ops
