// What streaming_table_manager.cc and streaming_table_manager_check.cc share: a definition made
// from its statement, a query parsed and planned with its static Delta relations, and the
// per-batch preparation that makes those relations readable. Internal to StreamingTableManager.
//
// Thread safety: pure functions (Prepare opens its own connection through the planner).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"
#include "fs/file_system.h"
#include "plan/planner.h"
#include "sql/delta_references.h"
#include "sql/settings.h"
#include "sql/streaming_statements.h"
#include "sql/streaming_table_catalog.h"
#include "sql/table_catalog.h"
#include "stream/persisted_conf.h"

namespace sluice::sql {

// A query ready to run: the plan, the MERGE keys, the static Delta relations it reads.
struct PreparedQuery {
  plan::PlannedStreamingQuery planned;
  std::vector<DeltaReference> static_tables;
  std::vector<std::string> static_paths;  // per static_tables entry
};

// The sluice.* settings that a checkpoint records, as the loop's persisted conf.
stream::ConfMap SessionConf(const Settings& settings);

// The definitions CREATE STREAMING TABLE and CREATE FLOW store (names lower-cased; no sources
// yet: StreamingTableManager::Analyze resolves them).
StreamingDefinition TableDefinition(const CreateStreamingTableStatement& s);
StreamingDefinition FlowDefinition(const CreateFlowStatement& s);

// NotSupported, with what to write instead, for TRIGGER CONTINUOUS.
Status CheckTrigger(const StreamingDefinition& def);

// Parses and plans `def`'s query (the planner's refusals come from here); static Delta relations
// become views named as the rewritten query reads them. `also_table(lower-cased name)`: a name
// that is read as a Delta table although none exists yet (a dataset of a pipeline being
// checked).
Result<PreparedQuery> Prepare(const StreamingDefinition& def, engine::Engine* engine,
                              const TableCatalog& tables,
                              const std::function<bool(const std::string&)>& also_table = {});

// The plan's prepare_connection: each static relation of `prepared` a view of its table's
// snapshot, except those named in `empty` (by view name), registered as those batches.
std::function<Status(engine::Connection&)> StaticRelations(
    const PreparedQuery& prepared, std::shared_ptr<fs::FileSystem> fs, engine::Engine* engine,
    std::map<std::string, engine::Batch> empty);

// The schema a reader of a Delta table written with `schema` gets (Delta's types), or the error
// a write of it would give, naming the column (a type Delta cannot store, such as HUGEINT).
Result<engine::Schema> DeltaStoredSchema(const engine::Schema& schema);

}  // namespace sluice::sql
