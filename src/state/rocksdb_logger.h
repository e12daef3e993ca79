// The info log of the state store's RocksDB databases (internal to src/state).
//
// RocksDB's default info log is a LOG file in the database directory, written through its
// WritableFileWriter, which ignores the status of each write: on a full disk, the log's second
// write after a failed one hit the writer's `assert(sync_without_flush_called_)`, and Debian's
// librocksdb 7.8 keeps its asserts, so `sluice run` died with SIGABRT instead of returning the
// ENOSPC it had met (docs/reliability.md, finding 15). This logger writes nothing to disk:
// RocksDB's error and fatal messages become Sluice warnings (they explain the Status the state
// store returns), its warnings debug lines, the rest is dropped.
//
// Thread safety: RocksDB calls it from its background threads; each message is one SLUICE_LOG
// line (common/logging.h).
#pragma once

#include <rocksdb/env.h>

#include <memory>
#include <string>

namespace sluice::state {

// A logger for the database in `dir` (named in every line).
std::shared_ptr<rocksdb::Logger> NewRocksDbLogger(std::string dir);

}  // namespace sluice::state
