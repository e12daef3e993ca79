#include "state/state_store.h"

#include "state/checkpointed_provider.h"
#include "state/kv_backend.h"

namespace sluice::state {

Result<std::unique_ptr<StateStoreProvider>> StateStoreProvider::Open(StateStoreId id,
                                                                     StateStoreOptions options) {
  const std::string what = "opening the state store of " + id.ToString();
  auto invalid = [&](const std::string& msg) { return Status::InvalidArgument(what + ": " + msg); };
  if (id.checkpoint_root.empty()) return invalid("the checkpoint location is empty");
  if (id.operator_id < 0) return invalid("negative operator id");
  if (id.partition_id < 0) return invalid("negative partition id");
  if (id.store_name.empty() || id.store_name.find('/') != std::string::npos ||
      id.store_name[0] == '_' || id.store_name[0] == '.') {
    return invalid("bad store name '" + id.store_name + "'");
  }
  if (options.snapshot_interval < 1) return invalid("snapshot_interval must be >= 1");
  if (options.min_versions_to_retain < 1) return invalid("min_versions_to_retain must be >= 1");
  std::unique_ptr<KvBackend> backend;
  if (options.kind == StateStoreProviderKind::kRocksDb) {
    if (options.local_dir.empty()) return invalid("the RocksDB provider needs a local_dir");
    if (options.rocksdb.block_cache_bytes < (int64_t{1} << 20) && !options.rocksdb.shared_budget) {
      return invalid("rocksdb.block_cache_bytes must be at least 1 MiB");
    }
    if (options.rocksdb.write_buffer_bytes < (int64_t{64} << 10)) {
      return invalid("rocksdb.write_buffer_bytes must be at least 64 KiB");
    }
    SLUICE_ASSIGN_OR_RETURN_CTX(backend, OpenRocksDbBackend(options.local_dir, options.rocksdb),
                                what);
  } else {
    backend = NewMemoryBackend();
  }
  return std::unique_ptr<StateStoreProvider>(
      new CheckpointedProvider(std::move(id), std::move(options), std::move(backend)));
}

}  // namespace sluice::state
