#include "stream/checkpoint_metadata.h"

#include <nlohmann/json.hpp>

#include "common/uuid.h"
#include "stream/batch_log.h"
#include "stream/checkpoint_layout.h"
#include "stream/json_util.h"

namespace sluice::stream {

std::string SerializeStreamMetadata(const StreamMetadata& metadata) {
  nlohmann::ordered_json j;
  j["id"] = metadata.id;
  return j.dump();
}

Result<StreamMetadata> ParseStreamMetadata(std::string_view bytes) {
  return CatchJsonExceptions("checkpoint metadata", [&]() -> Result<StreamMetadata> {
    nlohmann::json j = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Status::Corruption("not valid JSON");
    if (!j.is_object()) return Status::Corruption("expected a JSON object {\"id\":\"<uuid>\"}");
    auto it = j.find("id");
    if (it == j.end() || !it->is_string()) {
      return Status::Corruption("missing string field \"id\"");
    }
    StreamMetadata metadata;
    metadata.id = it->get<std::string>();
    if (!IsCanonicalUuid(metadata.id)) {
      return Status::Corruption("query id '" + metadata.id + "' is not a UUID");
    }
    return metadata;
  });
}

Result<StreamMetadata> ReadStreamMetadata(fs::FileSystem& fs, const std::string& checkpoint_root) {
  const std::string path = MetadataPath(checkpoint_root);
  SLUICE_ASSIGN_OR_RETURN(std::string bytes, fs.ReadFile(path));
  return ParseStreamMetadata(bytes).WithContext("checkpoint metadata file " + path);
}

namespace {
// The first log entry (offsets/<N> or commits/<N>) of the checkpoint, or "" when it has none.
Result<std::string> FirstLogEntry(fs::FileSystem& fs, const std::string& checkpoint_root) {
  for (const std::string& dir : {OffsetsDir(checkpoint_root), CommitsDir(checkpoint_root)}) {
    auto listing = fs.List(dir);
    if (!listing.ok()) {
      if (listing.status().IsNotFound()) continue;
      return listing.status().WithContext("listing " + dir);
    }
    for (const auto& f : *listing) {
      if (!f.is_directory && ParseBatchFileName(fs::BaseName(f.path))) return f.path;
    }
  }
  return std::string();
}
}  // namespace

Result<StreamMetadata> LoadOrCreateStreamMetadata(fs::FileSystem& fs,
                                                  const std::string& checkpoint_root,
                                                  const fs::WriteOptions& options, bool* created) {
  if (created != nullptr) *created = false;
  Result<StreamMetadata> existing = ReadStreamMetadata(fs, checkpoint_root);
  if (existing.ok() || !existing.status().IsNotFound()) return existing;

  // The metadata file is written before any log entry, so a checkpoint with log entries and no
  // metadata is damaged. A new id would make the sinks that key their idempotence on the query
  // id (Delta's txn appId) write the uncommitted batch again: refuse instead (Spark makes a new
  // id).
  SLUICE_ASSIGN_OR_RETURN(std::string entry, FirstLogEntry(fs, checkpoint_root));
  if (!entry.empty()) {
    return Status::Corruption(
        "checkpoint " + checkpoint_root + " is damaged: its metadata file " +
        MetadataPath(checkpoint_root) + " is missing but it holds " + entry +
        ", so the query id is lost; restore the metadata file ({\"id\":\"<query id>\"}, the "
        "id is the appId of the query's txn entries in a Delta sink's log) or start the query "
        "on a new checkpoint");
  }

  StreamMetadata fresh{NewUuidV4()};
  const std::string path = MetadataPath(checkpoint_root);
  Status st = fs.CreateIfAbsent(path, SerializeStreamMetadata(fresh), options);
  if (st.ok()) {
    if (created != nullptr) *created = true;
    return fresh;
  }
  if (!st.IsAlreadyExists()) return st.WithContext("creating checkpoint metadata file " + path);
  // A concurrent starter created it between our read and our create: its id wins.
  return ReadStreamMetadata(fs, checkpoint_root);
}

}  // namespace sluice::stream
