// StreamingTableCatalog: the definitions of a warehouse's streaming tables and flows.
//
// A streaming table's definition is stored in <warehouse>/_sluice/streaming_tables/<name>.json,
// a flow's in <warehouse>/_sluice/flows/<name>.json, so that a new process finds them (the
// `restart` directive of the SQL logic tests, `sluice run` after a stop). Format (version 1):
//
//   {"version":1,"kind":"table"|"flow","name":"q","target":"q","query":"SELECT ...",
//    "output_mode":"Append","trigger":{"kind":"AvailableNow","interval_ms":0},
//    "schedule_every_ms":null,"columns":[{"name":"a","type":"INT"}],"partitioned_by":[],
//    "properties":{...},"sources":[{"format":"delta","options":{"path":"/wh/input"}}]}
// An AUTO CDC flow adds "auto_cdc": {...} (auto_cdc_spec.h); its query is SELECT * FROM STREAM src.
// A table with expectations adds "expectations": [{"name","condition","action"}, ...]
// (pipeline_expectations.h).
//
// `sources` are the query's STREAM relations resolved when the definition was made (a table
// name to its path, relative paths made absolute). A secret option's value (common/redaction.h)
// is stored once, in the query text: in `sources` it is "*********(redacted)" and is read back
// from the query; a secret('scope', 'key') reference is stored as it is (it holds no secret).
// The files are written mode 0600. Checkpoints: a table's at
// <warehouse>/_checkpoints/<name>, a flow's at <warehouse>/_checkpoints/<target>/flows/<name>.
// Names are case-insensitive (stored lower-cased).
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
#include "sinks/sink.h"
#include "sql/auto_cdc_spec.h"
#include "sql/pipeline_expectations.h"
#include "sql/table_statements.h"
#include "stream/trigger.h"

namespace sluice::sql {

// One resolved STREAM relation: a source format of sources/source_factory.h and its options.
struct ResolvedSource {
  std::string format;
  std::map<std::string, std::string> options;
  bool operator==(const ResolvedSource&) const = default;
};

struct StreamingDefinition {
  enum class Kind { kTable, kFlow };
  Kind kind = Kind::kTable;
  std::string name;                  // lower-cased
  std::string target;                // the table the query writes: the name itself for a table
  std::optional<std::string> query;  // the SELECT text; nullopt for a table only flows fill
  sinks::OutputMode output_mode = sinks::OutputMode::kAppend;
  std::optional<stream::Trigger> trigger;  // as written; nullopt: none given
  std::optional<int64_t> schedule_every_ms;
  std::vector<ColumnDefinition> columns;
  std::vector<std::string> partitioned_by;
  Properties properties;
  std::vector<ResolvedSource> sources;
  std::optional<AutoCdcSpec> auto_cdc;  // an AUTO CDC flow; nullopt for an append flow or a table
  // A table's expectations (pipeline_expectations.h), checked on its query's rows.
  std::vector<Expectation> expectations;

  // Same query, sources, mode, trigger and table shape (CREATE OR REFRESH with no change).
  bool SameAs(const StreamingDefinition& other) const;
};

std::string DefinitionToJson(const StreamingDefinition& def);
// Corruption naming `what` for a malformed definition.
Result<StreamingDefinition> DefinitionFromJson(const std::string& text, const std::string& what);

// "Append" / "Update" / "Complete" -> mode; InvalidArgument otherwise.
Result<sinks::OutputMode> ParseOutputModeName(const std::string& name);

class StreamingTableCatalog {
 public:
  StreamingTableCatalog(std::shared_ptr<fs::FileSystem> fs, std::string warehouse);

  // nullopt when there is no definition of that kind and name.
  Result<std::optional<StreamingDefinition>> Find(StreamingDefinition::Kind kind,
                                                  const std::string& name) const;
  // Creates or replaces the definition (atomically).
  Status Save(const StreamingDefinition& def);
  // Removes the definition; OK when there is none.
  Status Remove(StreamingDefinition::Kind kind, const std::string& name);
  // All definitions of a kind, sorted by name.
  Result<std::vector<StreamingDefinition>> List(StreamingDefinition::Kind kind) const;

  // The checkpoint directory of a definition.
  std::string CheckpointOf(const StreamingDefinition& def) const;
  std::string TableCheckpoint(const std::string& name) const;

  const std::string& warehouse() const { return warehouse_; }

 private:
  std::string DirOf(StreamingDefinition::Kind kind) const;
  std::string PathOf(StreamingDefinition::Kind kind, const std::string& name) const;

  std::shared_ptr<fs::FileSystem> fs_;
  std::string warehouse_;
};

}  // namespace sluice::sql
