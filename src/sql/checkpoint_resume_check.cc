#include "sql/checkpoint_resume_check.h"

#include <algorithm>
#include <cctype>

#include "state/operator_metadata.h"
#include "stream/checkpoint_layout.h"
#include "stream/commit_log.h"
#include "stream/offset_seq_log.h"
#include "stream/restart_plan.h"
#include "stream/source_identity.h"

namespace sluice::sql {
namespace {

bool AllDigits(const std::string& s) {
  return !s.empty() && s.size() <= 9 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// Copies the file `from` on `fs` to the local path `to` when it exists.
Status CopyIfExists(fs::FileSystem& fs, const std::string& from, const std::string& to) {
  SLUICE_ASSIGN_OR_RETURN(bool exists, fs.Exists(from));
  if (!exists) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN(std::string bytes, fs.ReadFile(from));
  return fs::LocalFileSystem()->AtomicReplace(to, bytes, {false});
}

// The operator metadata and state schema files of every stateful operator (not its state).
Status CopyStateMetadata(fs::FileSystem& fs, const std::string& checkpoint,
                         const std::string& scratch) {
  const std::string state_dir = fs::JoinPath(checkpoint, stream::kStateDirName);
  Result<std::vector<fs::FileInfo>> operators = fs.List(state_dir);
  if (operators.status().IsNotFound()) return Status::OK();
  if (!operators.ok()) return operators.status();
  for (const fs::FileInfo& op : *operators) {
    const std::string base = fs::BaseName(op.path);
    if (!AllDigits(base)) continue;
    const int64_t id = std::stoll(base);
    SLUICE_RETURN_NOT_OK(CopyIfExists(fs, state::OperatorMetadataPath(checkpoint, id),
                                      state::OperatorMetadataPath(scratch, id)));
    SLUICE_RETURN_NOT_OK(CopyIfExists(fs, state::StateSchemaPath(checkpoint, id),
                                      state::StateSchemaPath(scratch, id)));
    // The other stores' schemas (a join's four stores): state/<op>/0/<store>/_metadata/schema.
    Result<std::vector<fs::FileInfo>> first =
        fs.List(fs::JoinPath(fs::JoinPath(state_dir, base), "0"));
    if (first.status().IsNotFound()) continue;
    if (!first.ok()) return first.status();
    for (const fs::FileInfo& entry : *first) {
      const std::string store = fs::BaseName(entry.path);
      if (store.empty() || store == "_metadata" || store.find('.') != std::string::npos) continue;
      SLUICE_RETURN_NOT_OK(CopyIfExists(fs, state::StateSchemaPath(checkpoint, id, store),
                                        state::StateSchemaPath(scratch, id, store)));
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::optional<stream::ConfMap>> PrepareResumeCheck(
    const std::shared_ptr<fs::FileSystem>& fs, const std::string& checkpoint,
    const std::vector<std::string>& identities, const stream::ConfMap& session_conf,
    const std::string& scratch_checkpoint) {
  const stream::OffsetSeqLog offsets(fs, checkpoint);
  const stream::CommitLog commits(fs, checkpoint);
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchId> batches, offsets.ListIds());
  if (batches.empty()) return std::optional<stream::ConfMap>();
  // The sources, as the start's check makes it, on a copy of the recorded identities.
  const std::string recorded = stream::SourceIdentityPath(checkpoint);
  SLUICE_ASSIGN_OR_RETURN(bool has_identities, fs->Exists(recorded));
  if (has_identities) {
    SLUICE_RETURN_NOT_OK(
        CopyIfExists(*fs, recorded, stream::SourceIdentityPath(scratch_checkpoint)));
    Status same = stream::CheckOrRecordSourceIdentities(*fs::LocalFileSystem(), scratch_checkpoint,
                                                        identities, false);
    if (!same.ok()) return FromScratchCheckpoint(same, checkpoint, scratch_checkpoint).first;
  }
  stream::RestartOptions restart;
  restart.num_sources = identities.size();
  restart.session_conf = session_conf;
  restart.checkpoint_root = checkpoint;
  SLUICE_ASSIGN_OR_RETURN(stream::RestartPlan plan, stream::PlanRestart(offsets, commits, restart));
  SLUICE_RETURN_NOT_OK(CopyStateMetadata(*fs, checkpoint, scratch_checkpoint));
  // The latest commit: an operator without state is new only once a batch has committed.
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchId> committed, commits.log().ListIds());
  if (!committed.empty()) {
    const std::string name = committed.back().ToString();
    SLUICE_RETURN_NOT_OK(CopyIfExists(*fs, fs::JoinPath(stream::CommitsDir(checkpoint), name),
                                      fs::JoinPath(stream::CommitsDir(scratch_checkpoint), name)));
  }
  return std::optional(plan.conf);
}

std::pair<Status, bool> FromScratchCheckpoint(const Status& st, const std::string& checkpoint,
                                              const std::string& scratch_checkpoint) {
  std::string message = st.message();
  bool named = false;
  for (size_t at = 0; (at = message.find(scratch_checkpoint, at)) != std::string::npos;) {
    message.replace(at, scratch_checkpoint.size(), checkpoint);
    at += checkpoint.size();
    named = true;
  }
  return {Status(st.code(), message), named};
}

}  // namespace sluice::sql
