// The latest snapshot seen of each Delta table in this process, so that a table or a writer
// opened again (each statement of a `sluice sql` session opens its own) starts from it and
// applies only the commits after it, instead of reading the checkpoint and the commits since it
// again: a commit's cost then does not grow with the table's files.
//
//   if (auto cached = LookupCachedSnapshot(fs, root)) { ... UpdateSnapshot from *cached ... }
//   CacheSnapshot(fs, snapshot);   // after every refresh and commit
//
// A snapshot is cached with the size and modification time of its version's commit file (the
// last commit of its LogSegment, as listed or stat-ed). Lookup stats that file and uses the
// entry only when it is still there with the same size and modification time; otherwise (the
// table was deleted and created again, or that commit was cleaned up) the entry is dropped and
// the caller loads the table from its log. A snapshot whose commit file info is unknown (its
// version is only in a checkpoint) is not cached. Entries are per FileSystem (held weakly: an
// entry of a destroyed FileSystem is never used) and table root; at most kMaxCachedTables tables,
// the least recently used dropped first.
//
// Thread safety: all functions are thread-safe. Snapshots are immutable and shared.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "delta/snapshot.h"
#include "fs/file_system.h"

namespace sluice::delta {

inline constexpr size_t kMaxCachedTables = 32;

// The cached latest snapshot of `table_root` on `fs` when its commit file is unchanged (one
// stat), else null.
std::shared_ptr<const Snapshot> LookupCachedSnapshot(const std::shared_ptr<fs::FileSystem>& fs,
                                                     const std::string& table_root);

// Remembers `snapshot` as the latest snapshot of its table (replacing the entry of that table).
// Does nothing for a null snapshot or one whose version's commit file info is unknown.
void CacheSnapshot(const std::shared_ptr<fs::FileSystem>& fs,
                   std::shared_ptr<const Snapshot> snapshot);

// Drops every entry (tests).
void ClearSnapshotCache();

}  // namespace sluice::delta
