// Logical conflict detection between a transaction that lost the race for a commit version and
// the commits that won (Delta's ConflictChecker, Serializable isolation).
//
// For each winning commit, in version order, the transaction conflicts when the winner
//   - changed the protocol                       -> "ProtocolChanged"
//   - changed the metadata (schema, properties)  -> "MetadataChanged"
//   - recorded a txn for an appId this transaction also records -> "ConcurrentTransaction"
//   - removed a file this transaction read       -> "ConcurrentDeleteRead"
//   - removed a file this transaction removes    -> "ConcurrentDeleteDelete"
//   - added files with dataChange=true into data this transaction read (the whole table, or one
//     of the partitions it read), unless this transaction is a blind append -> "ConcurrentAppend".
// Anything else (a concurrent blind append vs our blind append, compaction adds with
// dataChange=false into data we only appended to, commitInfo...) is no conflict: the
// transaction is rebased onto the winner and retried at the next version.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "delta/actions.h"

namespace sluice::delta {

// What a transaction read from its snapshot (its read predicate, coarsely).
struct ReadSet {
  bool whole_table = false;                 // e.g. an unpartitioned UPDATE, an overwrite
  std::vector<PartitionValues> partitions;  // partitions read (compared on their values)
  std::set<std::string> files;              // log paths of files read

  bool Empty() const { return !whole_table && partitions.empty() && files.empty(); }
};

// The facts about our transaction the checker needs.
struct PendingTransaction {
  ReadSet read;
  std::set<std::string> removed_files;  // log paths this transaction removes
  std::set<std::string> app_ids;        // txn appIds this transaction records
  // True when the transaction only adds files and read nothing (Delta's isBlindAppend).
  bool blind_append = true;
};

// Summarizes our actions into removed_files/app_ids (read set and blind_append are the caller's).
void SummarizeActions(const std::vector<Action>& actions, PendingTransaction* txn);

// OK when `winner` (the actions of commit `winner_version`) does not conflict with `txn`;
// otherwise Conflict naming the kind, the winning version and operation, and the file or
// partition that clashed, e.g. "ConcurrentDeleteReadException: commit 7 (DELETE) of /t removed
// file 'part-0...parquet' that this transaction read. Retry the operation.".
Status CheckConflict(const PendingTransaction& txn, const std::vector<Action>& winner,
                     Version winner_version, const std::string& table_root);

// "{a=1, b=null}" for messages.
std::string FormatPartition(const PartitionValues& values);

}  // namespace sluice::delta
