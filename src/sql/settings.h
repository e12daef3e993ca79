// Engine settings of one session: `SET sluice.<name> = <literal>`.
//
// Every setting Sluice knows is declared once (settings.cc) with its kind, default and meaning;
// setting an unknown `sluice.*` name or a value of the wrong kind is an InvalidArgument error
// that names the setting. Settings recorded in a streaming checkpoint when it is created are
// marked `checkpointed`: on restart the checkpoint's value wins (docs/streaming.md "Start and
// restart").
//
// Thread safety: not thread-safe; a Settings object belongs to one Session.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/status.h"

namespace sluice::sql {

enum class SettingKind { kString, kInteger, kBoolean };

struct SettingDefinition {
  std::string_view name;  // without the "sluice." prefix
  SettingKind kind;
  std::string_view default_value;
  std::string_view description;
  bool checkpointed = false;
};

// All settings Sluice knows, sorted by name.
const std::vector<SettingDefinition>& AllSettings();

class Settings {
 public:
  // `name` with or without the "sluice." prefix; `value` already unquoted. Booleans accept
  // true/false (any case); integers are decimal. InvalidArgument for unknown names or values.
  Status Set(std::string_view name, std::string_view value);
  // Back to the default.
  Status Reset(std::string_view name);
  // The current value (the default when not set). InvalidArgument for unknown names.
  Result<std::string> Get(std::string_view name) const;
  // Typed reads of a known setting; the caller names a setting of that kind (SLUICE_DCHECK).
  std::string GetString(std::string_view name) const;
  int64_t GetInteger(std::string_view name) const;
  bool GetBoolean(std::string_view name) const;

  // Settings set in this session, keyed by name without the "sluice." prefix.
  const std::map<std::string, std::string>& overrides() const { return values_; }

 private:
  std::map<std::string, std::string> values_;  // key: name without prefix
};

}  // namespace sluice::sql
