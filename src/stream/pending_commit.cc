#include "stream/pending_commit.h"

#include <utility>

namespace sluice::stream {

namespace {

// Out of line: GCC 12 reports a false -Wfree-nonheap-object for a Result destroyed inline in the
// thread's body.
[[gnu::noinline]] Status PrepareInto(const CommitLog& log, BatchId id,
                                     const CommitMetadata& metadata,
                                     const fs::WriteOptions& options,
                                     fs::FileSystem::PreparedFile* out) {
  Result<fs::FileSystem::PreparedFile> prepared = log.Prepare(id, metadata, options);
  if (!prepared.ok()) return prepared.status();
  *out = std::move(*prepared);
  return Status::OK();
}

}  // namespace

PendingCommitEntry::PendingCommitEntry(const CommitLog& log, BatchId id, CommitMetadata metadata,
                                       fs::WriteOptions options)
    : log_(log), id_(id), options_(options) {
  worker_ = std::thread([this, metadata = std::move(metadata)] {
    prepare_status_ = PrepareInto(log_, id_, metadata, options_, &prepared_);
  });
}

PendingCommitEntry::~PendingCommitEntry() {
  if (worker_.joinable()) worker_.join();
  if (!published_ && prepare_status_.ok()) log_.Abandon(prepared_);
}

Status PendingCommitEntry::Publish() {
  if (published_ || !worker_.joinable()) {
    return Status::Internal("commit log entry " + log_.log().PathFor(id_) + " published twice");
  }
  worker_.join();
  SLUICE_RETURN_NOT_OK(prepare_status_);
  published_ = true;  // a failed publish drops its temporary file itself
  return log_.Publish(id_, prepared_, options_);
}

}  // namespace sluice::stream
