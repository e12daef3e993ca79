// KvBackend: the working copy of one partition's state (internal to src/state).
//
// The checkpointed provider (checkpointed_provider.h) owns versions, files and recovery; a
// backend only holds the current key-value contents: a sorted map in memory, or a RocksDB
// database in a local directory. Writes apply immediately; rolling back is the provider's job
// (it rebuilds from the checkpoint).
//
// Thread safety: one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/status.h"
#include "state/state_file_format.h"
#include "state/state_store.h"

namespace sluice::state {

class KvBackend {
 public:
  virtual ~KvBackend() = default;

  // Reads see every earlier write, buffered or not.
  virtual Result<std::optional<std::string>> Get(std::string_view key) = 0;
  virtual Result<std::vector<std::optional<std::string>>> MultiGet(
      const std::vector<std::string_view>& keys) = 0;
  // Writes may be buffered (RocksDB: one WriteBatch, applied before the next read, by Flush and
  // past 1 MiB), so that a run of writes costs one database write, not one each.
  virtual Status Put(std::string_view key, std::string_view value) = 0;
  virtual Status Delete(std::string_view key) = 0;
  // Applies the buffered writes to the database. The provider calls it at commit.
  virtual Status Flush() = 0;

  // An iterator over keys in [begin, end); nullopt end = no bound. Follows StateIterator's
  // contract (modifications while it is open are allowed). Flushes buffered writes first, so the
  // iterator sees every write made before it. The backend must outlive it and must
  // not be Clear()ed while it is open.
  virtual Result<std::unique_ptr<StateIterator>> NewIterator(std::string begin,
                                                             std::optional<std::string> end) = 0;

  // Removes everything.
  virtual Status Clear() = 0;
  // Applies records in order (a changelog or a snapshot being loaded).
  virtual Status Apply(std::string_view file_bytes) = 0;

  // Exact key count when cheap (the map), else RocksDB's estimate.
  virtual int64_t CountKeysCheaply() = 0;
  // Exact key count by scanning when CountKeysCheaply is only an estimate.
  virtual Result<int64_t> CountKeysExactly() = 0;
  virtual bool count_is_exact() const = 0;

  virtual int64_t MemoryBytes() = 0;
  virtual void AddCustomMetrics(std::map<std::string, int64_t>* custom) = 0;
};

// A std::map backend.
std::unique_ptr<KvBackend> NewMemoryBackend();

// A RocksDB database in `dir`, which is deleted and recreated first.
Result<std::unique_ptr<KvBackend>> OpenRocksDbBackend(const std::string& dir,
                                                      const RocksDbSettings& settings);

// The smallest string greater than every string starting with `prefix`; nullopt when there is
// none (empty prefix, or all bytes 0xFF).
std::optional<std::string> PrefixSuccessor(std::string_view prefix);

}  // namespace sluice::state
