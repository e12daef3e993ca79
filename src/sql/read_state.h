// read_state('table' [, operator]) and the committed state of a checkpoint (docs/state.md
// "Inspecting state", docs/streaming-sql.md "Looking at the state").
//
// The state shown is the committed one: with commits/N the latest commit-log entry, version N+1
// of every partition of every stateful operator (the version batch N+1 will load); nothing when
// no batch has committed. A partition whose files stop below that version shows its latest
// version below it. Rows are decoded by sql/state_decoder.h, one row per state entry.
//
// Reading is read-only (state/state_reader.h): no file under the checkpoint is written and the
// checkpoint lock is not taken, so read_state works on a stopped query and beside a running one
// (it then shows the last batch committed when it read the commit log).
//
// Thread safety: pure functions over the file system.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"
#include "fs/file_system.h"
#include "state/operator_metadata.h"

namespace sluice::sql {

// The largest batch id in <checkpoint_root>/commits (nullopt when none).
Result<std::optional<int64_t>> LastCommittedBatch(fs::FileSystem& fs,
                                                  const std::string& checkpoint_root);

struct OperatorState {
  state::OperatorMetadata metadata;
  int64_t version = 0;  // the state version shown (last committed batch + 1; 0: none)
  engine::Batch rows;   // sql/state_decoder.h's columns, by partition then key order
};

// The committed state of every stateful operator of the checkpoint, or only of operator id
// `operator_index`. `what` starts every message ("read_state('t')", "checkpoint /x").
// Errors: NotFound "<what>: no state in checkpoint <root> ..." when it has no state directory
// or no operator; InvalidArgument "<what>: operator N is out of range ..." listing the
// operators; Corruption / NotFound naming the damaged or missing file.
Result<std::vector<OperatorState>> ReadCommittedState(std::shared_ptr<fs::FileSystem> fs,
                                                      const std::string& checkpoint_root,
                                                      std::optional<int64_t> operator_index,
                                                      const std::string& what);

// One read_state(...) call in a query.
struct ReadStateReference {
  std::string name;  // the table name as written
  std::optional<int64_t> operator_index;
  std::string view_name;  // the relation the rewritten query reads
};
struct ReadStateRewrite {
  std::string sql;
  std::vector<ReadStateReference> references;
};
// Replaces each `read_state('name')` / `read_state('name', <integer>)` (outside strings and
// comments) with the quoted view name "read_state:<name>[:<operator>]". InvalidArgument, naming
// the position, for other arguments.
Result<ReadStateRewrite> RewriteReadState(std::string_view sql);

}  // namespace sluice::sql
