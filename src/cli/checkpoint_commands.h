// `sluice checkpoint inspect DIR [--json]` and `sluice state dump DIR [--operator N] [--json]`
// (docs/state.md "Inspecting state"; issue 7's inspection commands).
//
// Both only read: no file of the checkpoint is written and the checkpoint lock is not taken, so
// they work on a stopped query and beside a running one (whose newest files they may or may not
// see). A file that does not parse is an error naming the file (exit 1).
//
// inspect: the query id, the batches of the offset and commit logs, the last committed batch, any
// uncommitted batch (offsets written, no commit: re-run on restart), the watermark, each source's
// offset in the latest batch, the persisted conf, and per stateful operator its name, partitions,
// state schema and per partition the versions on disk (oldest..latest, latest snapshot) and their
// size. Every offset and commit log entry and every state metadata/schema file is parsed.
//
// dump: the committed state of each operator (sql/read_state.h), one row per state entry: a
// table per operator, or with --json one JSON object per row (JSON lines).
//
// Thread safety: one call at a time per stream.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "fs/file_system.h"

namespace sluice::cli {

// The inspection report of the checkpoint at `root` (the JSON that --json prints).
Result<nlohmann::ordered_json> InspectCheckpoint(std::shared_ptr<fs::FileSystem> fs,
                                                 const std::string& root);

// The human-readable form of an InspectCheckpoint report.
void PrintCheckpointReport(const nlohmann::ordered_json& report, std::ostream& out);

struct CheckpointCommandOptions {
  std::string checkpoint;
  bool json = false;
  std::optional<int64_t> operator_id;  // state dump only
};

// The commands; exit codes 0 (ok) and 1 (error, printed to `err` as "Error: ...").
int RunCheckpointInspect(const CheckpointCommandOptions& options, std::ostream& out,
                         std::ostream& err);
int RunStateDump(const CheckpointCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace sluice::cli
