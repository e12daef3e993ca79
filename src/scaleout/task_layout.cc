#include "scaleout/task_layout.h"

#include <algorithm>
#include <climits>

#include <nlohmann/json.hpp>

#include "stream/checkpoint_layout.h"

namespace sluice::scaleout {

std::string TasksDir(std::string_view root) { return fs::JoinPath(root, kTasksDirName); }

std::string TaskCheckpointRoot(std::string_view root, int32_t partition) {
  return fs::JoinPath(TasksDir(root), std::to_string(partition));
}

std::string TaskAppId(std::string_view query_id, int32_t partition) {
  return std::string(query_id) + "-task-" + std::to_string(partition);
}

Result<int32_t> ParseTaskDirName(std::string_view name) {
  auto bad = [&]() {
    return Status::InvalidArgument("'" + std::string(name) +
                                   "' is not a task's directory name (a partition number)");
  };
  if (name.empty() || name.size() > 10 || (name.size() > 1 && name[0] == '0')) return bad();
  int64_t value = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return bad();
    value = value * 10 + (c - '0');
  }
  if (value > INT32_MAX) return bad();
  return static_cast<int32_t>(value);
}

std::string SerializeGroupRecord(const GroupRecord& record) {
  nlohmann::ordered_json j;
  j["version"] = 1;
  j["group"] = record.group;
  j["topic"] = record.topic;
  return j.dump();
}

Result<GroupRecord> ParseGroupRecord(std::string_view bytes) {
  nlohmann::json j = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Corruption("the group record is not a JSON object");
  }
  auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer() || version->get<int64_t>() != 1) {
    return Status::Corruption("the group record has no \"version\": 1 (another Sluice's format?)");
  }
  GroupRecord out;
  for (auto [key, field] : {std::pair{"group", &out.group}, std::pair{"topic", &out.topic}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string() || it->get<std::string>().empty()) {
      return Status::Corruption(std::string("the group record has no \"") + key + "\" string");
    }
    *field = it->get<std::string>();
  }
  return out;
}

Status ClaimGroupRecord(fs::FileSystem& fs, std::string_view root, const GroupRecord& want) {
  const std::string path = fs::JoinPath(root, kGroupRecordName);
  Status created = fs.CreateIfAbsent(path, SerializeGroupRecord(want));
  if (created.ok()) return Status::OK();
  if (!created.IsAlreadyExists()) return created.WithContext("writing " + path);
  SLUICE_ASSIGN_OR_RETURN_CTX(std::string bytes, fs.ReadFile(path), "reading " + path);
  Result<GroupRecord> have = ParseGroupRecord(bytes);
  if (!have.ok()) return Status::Corruption(path + ": " + have.status().message());
  if (*have == want) return Status::OK();
  return Status::InvalidArgument(
      "the checkpoint " + std::string(root) + " belongs to group '" + have->group + "' on topic '" +
      have->topic + "', not to group '" + want.group + "' on topic '" + want.topic +
      "': its tasks' offsets are of that group's run (use that group name, or a new "
      "checkpoint for another topic)");
}

Result<std::vector<int32_t>> ListTasks(fs::FileSystem& fs, std::string_view root) {
  const std::string dir = TasksDir(root);
  Result<std::vector<fs::FileInfo>> entries = fs.List(dir);
  if (!entries.ok()) {
    if (entries.status().IsNotFound()) return std::vector<int32_t>{};
    return entries.status().WithContext("listing " + dir);
  }
  std::vector<int32_t> out;
  for (const fs::FileInfo& e : *entries) {
    const std::string name = fs::BaseName(e.path);
    Result<int32_t> p = ParseTaskDirName(name);
    if (!p.ok() || !e.is_directory) {
      return Status::Corruption(dir + ": the entry '" + name +
                                "' is not a task (a directory named by a partition number)");
    }
    out.push_back(*p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<bool> HasSingleProcessBatches(fs::FileSystem& fs, std::string_view root) {
  const std::string dir = stream::OffsetsDir(root);
  Result<std::vector<fs::FileInfo>> entries = fs.List(dir);
  if (!entries.ok()) {
    if (entries.status().IsNotFound()) return false;
    return entries.status().WithContext("listing " + dir);
  }
  return !entries->empty();
}

}  // namespace sluice::scaleout
