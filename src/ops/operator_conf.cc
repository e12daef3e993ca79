#include "ops/operator_conf.h"

#include <charconv>
#include <system_error>

#include "common/strings.h"

namespace sluice::ops {

state::StateStoreProviderKind StateProviderFromConf(
    const std::map<std::string, std::string>& conf) {
  auto it = conf.find(kStateProviderClassConf);
  if (it == conf.end()) return state::StateStoreProviderKind::kRocksDb;
  const std::string lower = AsciiLower(it->second);
  const bool memory =
      lower.find("memory") != std::string::npos || lower.find("hdfs") != std::string::npos;
  return memory ? state::StateStoreProviderKind::kInMemory
                : state::StateStoreProviderKind::kRocksDb;
}

Result<std::optional<int64_t>> ByteCountConf(const std::map<std::string, std::string>& conf,
                                             std::string_view key) {
  auto it = conf.find(std::string(key));
  if (it == conf.end()) return std::optional<int64_t>();
  const std::string& text = it->second;
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) {
    return Status::InvalidArgument(std::string(key) + " must be a byte count >= 0, not '" + text +
                                   "'");
  }
  return std::optional<int64_t>(value);
}

}  // namespace sluice::ops
