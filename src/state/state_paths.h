// Names of the files in a state store's checkpoint directory (docs/formats/state.md):
// `<v>.changelog` and `<v>.snapshot`, v a decimal version without leading zeros.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::state {

enum class StateFileKind { kChangelog, kSnapshot };

struct StateFileName {
  StateFileKind kind;
  int64_t version;
};

// "12.changelog" / "12.snapshot".
std::string StateFileNameFor(StateFileKind kind, int64_t version);

// Parses a file name (not a path). nullopt for anything else: temporary files, other extensions,
// signs, leading zeros, versions < 1 or that overflow int64. Such names are ignored by readers.
std::optional<StateFileName> ParseStateFileName(std::string_view name);

}  // namespace sluice::state
