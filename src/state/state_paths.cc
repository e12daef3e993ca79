#include "state/state_paths.h"

#include <charconv>

#include "fs/file_system.h"
#include "state/state_store.h"

namespace sluice::state {
namespace {
constexpr std::string_view kChangelogExt = ".changelog";
constexpr std::string_view kSnapshotExt = ".snapshot";
}  // namespace

std::string StateStoreId::ToString() const {
  std::string s =
      "operator " + std::to_string(operator_id) + " partition " + std::to_string(partition_id);
  if (store_name != "default") s += " store " + store_name;
  return s;
}

std::string StateStoreCheckpointDir(const StateStoreId& id) {
  std::string dir = fs::JoinPath(
      fs::JoinPath(fs::JoinPath(id.checkpoint_root, "state"), std::to_string(id.operator_id)),
      std::to_string(id.partition_id));
  if (id.store_name != "default") dir = fs::JoinPath(dir, id.store_name);
  return dir;
}

std::string StateFileNameFor(StateFileKind kind, int64_t version) {
  return std::to_string(version) +
         std::string(kind == StateFileKind::kChangelog ? kChangelogExt : kSnapshotExt);
}

std::optional<StateFileName> ParseStateFileName(std::string_view name) {
  StateFileKind kind;
  std::string_view digits;
  if (name.ends_with(kChangelogExt)) {
    kind = StateFileKind::kChangelog;
    digits = name.substr(0, name.size() - kChangelogExt.size());
  } else if (name.ends_with(kSnapshotExt)) {
    kind = StateFileKind::kSnapshot;
    digits = name.substr(0, name.size() - kSnapshotExt.size());
  } else {
    return std::nullopt;
  }
  if (digits.empty() || digits[0] < '1' || digits[0] > '9') return std::nullopt;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  return StateFileName{kind, v};
}

}  // namespace sluice::state
