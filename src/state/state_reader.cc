#include "state/state_reader.h"

#include <algorithm>

namespace sluice::state {
namespace {

// A canonical non-negative decimal (no sign, no leading zeros) that fits int64.
std::optional<int64_t> ParseId(std::string_view s) {
  if (s.empty() || s.size() > 18 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

int64_t StoreFiles::LatestVersionAtMost(int64_t version) const {
  int64_t best = 0;
  for (const StateFileEntry& f : files) {
    if (f.version <= version) best = std::max(best, f.version);
  }
  return best;
}

Result<StoreFiles> ListStoreFiles(fs::FileSystem& fs, const StateStoreId& id) {
  StoreFiles out;
  out.dir = StateStoreCheckpointDir(id);
  Result<std::vector<fs::FileInfo>> listed = fs.List(out.dir);
  if (listed.status().IsNotFound()) return out;
  if (!listed.ok()) return listed.status().WithContext("listing state directory " + out.dir);
  for (const fs::FileInfo& info : *listed) {
    if (info.is_directory) continue;
    std::optional<StateFileName> name = ParseStateFileName(fs::BaseName(info.path));
    if (!name) continue;
    out.files.push_back({name->kind, name->version, info.size});
    out.total_bytes += info.size;
    out.latest_version = std::max(out.latest_version, name->version);
    if (name->kind == StateFileKind::kSnapshot) {
      out.latest_snapshot_version = std::max(out.latest_snapshot_version, name->version);
    }
  }
  std::sort(out.files.begin(), out.files.end(),
            [](const StateFileEntry& a, const StateFileEntry& b) {
              if (a.version != b.version) return a.version < b.version;
              return a.kind == StateFileKind::kChangelog && b.kind == StateFileKind::kSnapshot;
            });
  return out;
}

Result<std::vector<int64_t>> ListStateOperators(fs::FileSystem& fs,
                                                std::string_view checkpoint_root) {
  std::vector<int64_t> ids;
  const std::string dir = fs::JoinPath(checkpoint_root, "state");
  Result<std::vector<fs::FileInfo>> listed = fs.List(dir);
  if (listed.status().IsNotFound()) return ids;
  if (!listed.ok()) return listed.status().WithContext("listing state directory " + dir);
  for (const fs::FileInfo& info : *listed) {
    if (!info.is_directory) continue;
    if (std::optional<int64_t> id = ParseId(fs::BaseName(info.path))) ids.push_back(*id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

Result<OperatorMetadata> ReadOperatorMetadata(fs::FileSystem& fs, std::string_view checkpoint_root,
                                              int64_t operator_id) {
  const std::string path = OperatorMetadataPath(checkpoint_root, operator_id);
  Result<std::string> bytes = fs.ReadFile(path);
  if (bytes.status().IsNotFound()) {
    return Status::NotFound("the operator metadata file " + path + " does not exist");
  }
  if (!bytes.ok()) return bytes.status().WithContext("reading " + path);
  return DecodeOperatorMetadata(*bytes, path);
}

Result<StateSchema> ReadStateSchema(fs::FileSystem& fs, std::string_view checkpoint_root,
                                    int64_t operator_id, std::string_view store_name) {
  const std::string path = StateSchemaPath(checkpoint_root, operator_id, store_name);
  Result<std::string> bytes = fs.ReadFile(path);
  if (bytes.status().IsNotFound()) {
    return Status::NotFound("the state schema file " + path + " does not exist");
  }
  if (!bytes.ok()) return bytes.status().WithContext("reading " + path);
  return DecodeStateSchema(*bytes, path);
}

Result<std::vector<std::pair<std::string, std::string>>> ReadStoreVersion(
    std::shared_ptr<fs::FileSystem> fs, const StateStoreId& id, int64_t version) {
  StateStoreOptions options;
  options.kind = StateStoreProviderKind::kInMemory;  // no local directory, nothing written
  options.fs = std::move(fs);
  options.track_num_keys = false;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<StateStoreProvider> provider,
                          StateStoreProvider::Open(id, options));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<StateStore> store, provider->GetStore(version));
  std::vector<std::pair<std::string, std::string>> out;
  {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<StateIterator> it, store->Iterate());
    for (; it->Valid(); it->Next())
      out.emplace_back(std::string(it->key()), std::string(it->value()));
    SLUICE_RETURN_NOT_OK(it->status());
  }
  store->Abort();
  return out;
}

}  // namespace sluice::state
