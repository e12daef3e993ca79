#include "stream/checkpoint_metadata.h"

#include <nlohmann/json.hpp>

#include "stream/checkpoint_layout.h"
#include "stream/json_util.h"
#include "common/uuid.h"

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

Result<StreamMetadata> LoadOrCreateStreamMetadata(fs::FileSystem& fs,
                                                  const std::string& checkpoint_root,
                                                  const fs::WriteOptions& options, bool* created) {
  if (created != nullptr) *created = false;
  Result<StreamMetadata> existing = ReadStreamMetadata(fs, checkpoint_root);
  if (existing.ok() || !existing.status().IsNotFound()) return existing;

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
