// PendingCommitEntry: the commit log entry commits/<N> of a running batch, written and fsynced
// under a temporary name on a background thread (CommitLog::Prepare) while the batch's sink
// runs, and made visible by Publish() only after the sink has returned. The entry's bytes cost
// no time on the batch's critical path; the order in which recovery sees things is unchanged:
// commits/<N> appears, durably, only after the sink's write (e.g. the Delta commit) is durable.
//
// Destroyed without a successful Publish (the batch failed), it waits for the background write
// and drops the temporary file. Ownership: borrows `log`, which must outlive it. Thread safety:
// one owner thread (the background write runs on its own thread).
#pragma once

#include <thread>

#include "common/ids.h"
#include "common/result.h"
#include "fs/file_system.h"
#include "stream/commit_log.h"

namespace sluice::stream {

class PendingCommitEntry {
 public:
  // Starts writing commits/<id> with `metadata`.
  PendingCommitEntry(const CommitLog& log, BatchId id, CommitMetadata metadata,
                     fs::WriteOptions options);
  PendingCommitEntry(const PendingCommitEntry&) = delete;
  PendingCommitEntry& operator=(const PendingCommitEntry&) = delete;
  ~PendingCommitEntry();

  // Waits for the background write, then makes commits/<id> appear (durable with
  // options.sync). Errors are CommitLog::Add's (Conflict when the entry exists). Call once.
  Status Publish();

 private:
  const CommitLog& log_;
  BatchId id_;
  fs::WriteOptions options_;
  Status prepare_status_;                  // set by worker_
  fs::FileSystem::PreparedFile prepared_;  // set by worker_ when prepare_status_ is OK
  std::thread worker_;
  bool published_ = false;
};

}  // namespace sluice::stream
