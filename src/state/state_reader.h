// Read-only access to the state in a checkpoint, for inspection: read_state() in SQL,
// `sluice state dump` and `sluice checkpoint inspect` (docs/state.md "Inspecting state").
//
// Contract: nothing here writes, renames or deletes anything under the checkpoint, and no lock is
// taken, so a query that is running on the checkpoint is never disturbed. That is safe because
// every state file is written atomically (a reader sees a complete file or none) and a version
// that a query may still rewrite (an uncommitted batch's) is only read when asked for; the
// caller picks the version (the stream layer's commit log says which one is committed). A file
// deleted by the running query's maintenance between listing and reading gives NotFound naming
// it; reading again then picks newer files.
//
// Thread safety: pure functions over the file system.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "fs/file_system.h"
#include "state/operator_metadata.h"
#include "state/state_paths.h"
#include "state/state_store.h"

namespace sluice::state {

// One `<v>.changelog` / `<v>.snapshot` file of a store.
struct StateFileEntry {
  StateFileKind kind = StateFileKind::kChangelog;
  int64_t version = 0;
  int64_t size_bytes = 0;
};

// The state files of one store (one operator partition [+ store name]).
struct StoreFiles {
  std::string dir;                      // StateStoreCheckpointDir(id)
  std::vector<StateFileEntry> files;    // by version; a changelog before a snapshot of its version
  int64_t total_bytes = 0;              // of the files above
  int64_t latest_version = 0;           // the largest version with a file; 0 when none
  int64_t latest_snapshot_version = 0;  // 0 when none

  // The largest version <= `version` that has a file (0 when none): the version a reader loads
  // when the store was not written at `version` itself.
  int64_t LatestVersionAtMost(int64_t version) const;
};

// Lists the store's directory (a missing directory is a store without files). Names that are not
// state files (temporary files, _metadata) are ignored, as by the provider.
Result<StoreFiles> ListStoreFiles(fs::FileSystem& fs, const StateStoreId& id);

// The operator ids under <checkpoint_root>/state (directories named by a non-negative decimal
// number), ascending. Empty when there is no state directory.
Result<std::vector<int64_t>> ListStateOperators(fs::FileSystem& fs,
                                                std::string_view checkpoint_root);

// state/<opId>/_metadata/metadata. NotFound naming the file when absent; Corruption naming it
// when damaged.
Result<OperatorMetadata> ReadOperatorMetadata(fs::FileSystem& fs, std::string_view checkpoint_root,
                                              int64_t operator_id);

// The state schema of one store (StateSchemaPath). NotFound / Corruption naming the file.
Result<StateSchema> ReadStateSchema(fs::FileSystem& fs, std::string_view checkpoint_root,
                                    int64_t operator_id, std::string_view store_name = "default");

// Every key and value of the store at `version`, in key order, rebuilt from the checkpoint
// exactly as a restarting query rebuilds it (latest usable snapshot + changelogs, every file
// validated), in memory. Version 0 is the empty state. NotFound when `version` has no file
// (use StoreFiles::LatestVersionAtMost); Corruption naming the damaged file.
Result<std::vector<std::pair<std::string, std::string>>> ReadStoreVersion(
    std::shared_ptr<fs::FileSystem> fs, const StateStoreId& id, int64_t version);

}  // namespace sluice::state
