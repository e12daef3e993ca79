// Optimistic commits to a Delta log (PROTOCOL.md "Optimistic Concurrency Control").
//
// A Transaction starts from a snapshot (or from nothing, to create a table at version 0),
// collects actions and what it read, and commits by writing `_delta_log/<v>.json` for
// v = read version + 1 with FileSystem::CreateIfAbsent (put-if-absent: exactly one of several
// racing writers wins). A writer that loses reads the winning commits, checks them for logical
// conflicts (conflict_checker.h) and, when there are none, retries at the next free version
// after a jittered backoff that grows over the first four lost races and then shrinks again, so
// that a commit that has lost many races retries sooner than the others (fairness: it is not
// starved by writers that keep winning); after `max_attempts` attempts it gives up with
// Conflict. Within one process the commits to one table take turns (first come, first served:
// threads of a process never race each other; processes still race through put-if-absent). Data
// files must be written before Commit (the commit is the last step).
//
// The commit file holds commitInfo first, then protocol, metaData, txn, remove and add actions,
// one per line. Commit also computes the snapshot right after the commit (the read snapshot +
// the winners + our actions), so a writer can keep going without re-reading the log.
//
// The put-if-absent is two-phase (FileSystem::PrepareCreate, then PublishCreate): the commit
// file's bytes are written and fsynced under a temporary name first, then the barrier set with
// SetBeforePublish runs (the writer waits there for its data files' background fsyncs, which thus
// overlap the commit file's), and only then is the commit published under its name and its
// directory fsynced. So everything a commit names is durable before the commit is visible.
//
// Crash points (FileSystem::MaybeCrash): "delta.before_commit" just before the publish (a crash
// there leaves at most a temporary file in _delta_log, which readers skip), "delta.after_commit"
// just after it succeeded.
//
// Ownership: shares the FileSystem and the read snapshot. Thread safety: a Transaction is used
// by one thread; any number of Transactions (in any number of processes) may race on one table.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/result.h"
#include "delta/actions.h"
#include "delta/conflict_checker.h"
#include "delta/snapshot.h"
#include "fs/file_system.h"

namespace sluice::delta {

struct CommitOptions {
  // Commit attempts before giving up with Conflict (>= 1).
  int max_attempts = 1000;
  // Backoff after the n-th lost race: initial * 2^(n-1), capped at max, for n <= 4; then halved
  // per further loss down to initial / 4; times a random factor in [0.5, 1.5).
  int64_t initial_backoff_ms = 1;
  int64_t max_backoff_ms = 100;
  // fsync the commit file (fs::WriteOptions::sync).
  bool sync = true;
};

struct CommitResult {
  Version version;
  int attempts = 1;  // 1 = no lost race
  // The snapshot at `version` (files, txns, metadata, protocol; timestamp_ms = the commit file's
  // modification time).
  // Null only when it could not be built (the commit itself succeeded); re-read the log then.
  std::shared_ptr<const Snapshot> snapshot;
};

class Transaction {
 public:
  // `read_snapshot` null: the transaction creates the table (commits version 0 and must then
  // carry protocol and metaData actions).
  Transaction(std::shared_ptr<fs::FileSystem> fs, std::string table_root,
              std::shared_ptr<const Snapshot> read_snapshot, CommitOptions options = {});

  const std::shared_ptr<const Snapshot>& read_snapshot() const { return read_snapshot_; }
  const std::string& table_root() const { return table_root_; }
  // The version this transaction read (nullopt when it creates the table).
  std::optional<Version> read_version() const;

  // Reads, for conflict detection. A transaction that reads nothing and removes nothing is a
  // blind append.
  void ReadWholeTable() { read_.whole_table = true; }
  void ReadPartition(PartitionValues values) { read_.partitions.push_back(std::move(values)); }
  void ReadFile(const std::string& log_path) { read_.files.insert(log_path); }
  const ReadSet& read_set() const { return read_; }

  // Adds an action (protocol, metaData, add, remove, cdc, txn, domainMetadata). commitInfo is
  // built by Commit from SetOperation/AddMetric.
  void Add(Action action) { actions_.push_back(std::move(action)); }
  const std::vector<Action>& actions() const { return actions_; }

  // Files (storage paths) this transaction wrote itself (data and cdc files). They are the only
  // files a failed commit may delete: an add action may also name a file that exists in the
  // table's history (RESTORE re-adds them), which must never be deleted.
  void RecordWrittenFile(std::string storage_path) {
    written_files_.push_back(std::move(storage_path));
  }
  const std::vector<std::string>& written_files() const { return written_files_; }

  // Runs once per Commit, after the first commit file is prepared and before it is published;
  // an error fails the commit with nothing committed. Used to wait for data files' fsyncs.
  void SetBeforePublish(std::function<Status()> barrier) { before_publish_ = std::move(barrier); }

  // commitInfo.operation and operationParameters (values are JSON texts, e.g. "\"Append\"").
  void SetOperation(std::string operation, std::map<std::string, std::string> parameters_json = {});
  // commitInfo.operationMetrics[name] = value (Spark writes them as strings).
  void AddMetric(const std::string& name, int64_t value) { metrics_[name] = std::to_string(value); }

  // Commits. Errors: Conflict (a logical conflict, or max_attempts lost races), InvalidArgument
  // (a transaction without actions that change anything is still committed; two txn actions of
  // one appId are refused), I/O errors from the file system. On any error nothing was committed.
  Result<CommitResult> Commit();

 private:
  std::string CommitInfoJson(int64_t now_ms, bool blind_append) const;
  Result<std::shared_ptr<const Snapshot>> SnapshotAfter(
      Version version, const std::vector<std::pair<Version, std::vector<Action>>>& winners,
      const std::vector<Action>& ours, const fs::FileInfo& committed) const;

  std::shared_ptr<fs::FileSystem> fs_;
  std::string table_root_;
  std::shared_ptr<const Snapshot> read_snapshot_;
  CommitOptions options_;
  ReadSet read_;
  std::vector<Action> actions_;
  std::vector<std::string> written_files_;
  std::string operation_ = "WRITE";
  std::map<std::string, std::string> parameters_;  // name -> JSON text
  std::map<std::string, std::string> metrics_;
  std::string txn_id_;
  std::function<Status()> before_publish_;
};

// `<table_root>/_delta_log/<20-digit version>.json`.
std::string CommitPath(const std::string& table_root, Version version);

}  // namespace sluice::delta
