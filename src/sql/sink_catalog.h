// SinkCatalog: the sinks of a warehouse (CREATE SINK, docs/streaming-sql.md "Sinks").
//
// A sink's definition is stored in <warehouse>/_sluice/sinks/<name>.json, so that a new process
// (`sluice run` after a stop, `sluice sql`) finds it. Format (version 1):
//
//   {"version":1,"name":"out","format":"kafka","options":{"kafka.bootstrap.servers":"...",
//    "topic":"t"},"trigger":{"kind":"AvailableNow","interval_ms":0}}   (trigger null: none)
//
// Flows into a sink are flow definitions (streaming_table_catalog.h) whose target is the sink's
// name; their checkpoints are <warehouse>/_checkpoints/<sink>/flows/<flow>. Names are
// case-insensitive (stored lower-cased) and share the namespace of tables. The file is mode 0600
// (options may hold passwords; a secret('scope', 'key') value is kept as that reference).
//
// Thread safety: stateless apart from the paths; safe from several threads.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "fs/file_system.h"
#include "stream/trigger.h"

namespace sluice::sql {

struct SinkDefinition {
  std::string name;    // lower-cased
  std::string format;  // "kafka"
  std::map<std::string, std::string> options;
  std::optional<stream::Trigger> trigger;  // as written; nullopt: none given
  bool operator==(const SinkDefinition&) const = default;
};

std::string SinkDefinitionToJson(const SinkDefinition& def);
// Corruption naming `what` for a malformed definition.
Result<SinkDefinition> SinkDefinitionFromJson(const std::string& text, const std::string& what);

class SinkCatalog {
 public:
  SinkCatalog(std::shared_ptr<fs::FileSystem> fs, std::string warehouse);

  // nullopt when there is no sink of that name.
  Result<std::optional<SinkDefinition>> Find(const std::string& name) const;
  // Creates or replaces the definition (atomically).
  Status Save(const SinkDefinition& def);
  // Removes the definition; OK when there is none.
  Status Remove(const std::string& name);
  // All sinks, sorted by name.
  Result<std::vector<SinkDefinition>> List() const;

 private:
  std::string Dir() const;
  std::string PathOf(const std::string& name) const;

  std::shared_ptr<fs::FileSystem> fs_;
  std::string warehouse_;
};

}  // namespace sluice::sql
