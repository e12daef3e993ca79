#include "stream/source_identity.h"

#include <nlohmann/json.hpp>

#include "stream/batch_log.h"
#include "stream/checkpoint_layout.h"

namespace sluice::stream {

std::string SourceIdentityPath(const std::string& checkpoint_root) {
  return fs::JoinPath(fs::JoinPath(checkpoint_root, kSourcesDirName), "identity");
}

std::string SerializeSourceIdentities(const std::vector<std::string>& identities) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& id : identities) arr.push_back({{"description", id}});
  nlohmann::ordered_json j = {{"sources", arr}};
  return "v1\n" + j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::vector<std::string>> ParseSourceIdentities(std::string_view bytes) {
  auto lines = SplitLogLines(bytes);
  if (lines.size() < 2) return Status::Corruption("source identity file is incomplete");
  SLUICE_ASSIGN_OR_RETURN(int version, ParseLogVersion(lines[0], 1));
  (void)version;
  auto j = nlohmann::json::parse(std::string(lines[1]), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("sources") || !j["sources"].is_array()) {
    return Status::Corruption("source identity file: line 2 is not {\"sources\":[...]}");
  }
  std::vector<std::string> out;
  for (const auto& s : j["sources"]) {
    if (!s.is_object() || !s.contains("description") || !s["description"].is_string()) {
      return Status::Corruption("source identity file: a source lacks a string description");
    }
    out.push_back(s["description"].get<std::string>());
  }
  return out;
}

Status CheckOrRecordSourceIdentities(fs::FileSystem& fs, const std::string& checkpoint_root,
                                     const std::vector<std::string>& identities, bool sync) {
  const std::string path = SourceIdentityPath(checkpoint_root);
  auto bytes = fs.ReadFile(path);
  if (!bytes.ok() && bytes.status().IsNotFound()) {
    Status st = fs.CreateIfAbsent(path, SerializeSourceIdentities(identities), {.sync = sync});
    if (st.ok() || !st.IsAlreadyExists()) return st.WithContext("writing " + path);
    bytes = fs.ReadFile(path);  // a racing starter wrote it first: compare with theirs
  }
  if (!bytes.ok()) return bytes.status().WithContext("reading " + path);
  SLUICE_ASSIGN_OR_RETURN_CTX(auto recorded, ParseSourceIdentities(*bytes), path);
  const std::string advice =
      "; the checkpoint " + checkpoint_root +
      " belongs to a query with other sources: use a new checkpoint location for the changed query";
  if (recorded.size() != identities.size()) {
    return Status::InvalidArgument("the number of streaming sources changed from " +
                                   std::to_string(recorded.size()) + " to " +
                                   std::to_string(identities.size()) + advice);
  }
  for (size_t i = 0; i < recorded.size(); ++i) {
    if (recorded[i] != identities[i]) {
      return Status::InvalidArgument("streaming source " + std::to_string(i) + " changed from '" +
                                     recorded[i] + "' to '" + identities[i] + "'" + advice);
    }
  }
  return Status::OK();
}

}  // namespace sluice::stream
