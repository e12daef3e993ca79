#include "plan/operator_check.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "state/operator_metadata.h"

namespace sluice::plan {
namespace {

std::string ListOf(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i > 0 ? ", " : "") + std::to_string(i) + " " + names[i];
  }
  return "[" + out + "]";
}

std::string ListOf(const std::map<int64_t, std::string>& names) {
  std::string out;
  for (const auto& [id, name] : names) {
    out += (out.empty() ? "" : ", ") + std::to_string(id) + " " + name;
  }
  return "[" + out + "]";
}

}  // namespace

Status CheckStatefulOperatorsMatch(fs::FileSystem& fs, std::string_view checkpoint_root,
                                   const std::vector<std::string>& operators) {
  const std::string state_dir = fs::JoinPath(checkpoint_root, "state");
  Result<std::vector<fs::FileInfo>> entries = fs.List(state_dir);
  if (entries.status().IsNotFound()) return Status::OK();
  if (!entries.ok()) return entries.status();
  std::map<int64_t, std::string> stored;  // operator id -> name, from the metadata files
  for (const fs::FileInfo& e : *entries) {
    const std::string base = fs::BaseName(e.path);
    if (base.empty() || base.size() > 9 ||
        !std::all_of(base.begin(), base.end(), [](unsigned char c) { return std::isdigit(c); })) {
      continue;
    }
    const int64_t id = std::stoll(base);
    const std::string path = state::OperatorMetadataPath(checkpoint_root, id);
    SLUICE_ASSIGN_OR_RETURN(bool exists, fs.Exists(path));
    if (!exists) continue;
    SLUICE_ASSIGN_OR_RETURN(std::string bytes, fs.ReadFile(path));
    SLUICE_ASSIGN_OR_RETURN(state::OperatorMetadata m, state::DecodeOperatorMetadata(bytes, path));
    stored[id] = m.operator_name;
  }
  if (stored.empty()) return Status::OK();
  const std::string lists =
      ". This query's stateful operators (id name, top-down): " + ListOf(operators) +
      "; the checkpoint's: " + ListOf(stored) +
      " (STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA). Restore "
      "the previous query, or start this one from a new checkpoint location";
  for (const auto& [id, name] : stored) {
    if (id >= static_cast<int64_t>(operators.size())) {
      return Status::InvalidArgument("the checkpoint " + std::string(checkpoint_root) +
                                     " has state of stateful operator " + std::to_string(id) +
                                     " ('" + name + "') that this query does not have" + lists);
    }
    const std::string& mine = operators[static_cast<size_t>(id)];
    if (mine != name) {
      return Status::InvalidArgument("stateful operator " + std::to_string(id) + " is '" + mine +
                                     "' in this query but '" + name + "' in the checkpoint " +
                                     std::string(checkpoint_root) +
                                     ": the stateful operators changed or were reordered" + lists);
    }
  }
  // An operator without state while others have some: new, unless the first batch never
  // completed (operators write their metadata when they first run, one after the other).
  for (size_t id = 0; id < operators.size(); ++id) {
    if (stored.count(static_cast<int64_t>(id)) > 0) continue;
    Result<std::vector<fs::FileInfo>> commits = fs.List(fs::JoinPath(checkpoint_root, "commits"));
    if (commits.status().IsNotFound()) return Status::OK();
    if (!commits.ok()) return commits.status();
    if (commits->empty()) return Status::OK();
    return Status::InvalidArgument("stateful operator " + std::to_string(id) + " ('" +
                                   operators[id] + "') is new: the checkpoint " +
                                   std::string(checkpoint_root) +
                                   " has no state for it, so it would start empty in the middle "
                                   "of the stream" +
                                   lists);
  }
  return Status::OK();
}

}  // namespace sluice::plan
