#include "delta/conflict_checker.h"

#include <type_traits>
#include <variant>

namespace sluice::delta {

namespace {

bool PartitionMatches(const PartitionValues& read, const PartitionValues& added) {
  for (const auto& [col, value] : read) {
    auto it = added.find(col);
    std::optional<std::string> other = it == added.end() ? std::nullopt : it->second;
    auto norm = [](const std::optional<std::string>& v) {
      return (v && !v->empty()) ? v : std::nullopt;
    };
    if (norm(value) != norm(other)) return false;
  }
  return true;
}

}  // namespace

std::string FormatPartition(const PartitionValues& values) {
  std::string s = "{";
  bool first = true;
  for (const auto& [k, v] : values) {
    if (!first) s += ", ";
    first = false;
    s += k + "=" + (v ? *v : "null");
  }
  return s + "}";
}

void SummarizeActions(const std::vector<Action>& actions, PendingTransaction* txn) {
  for (const Action& a : actions) {
    if (const auto* r = std::get_if<RemoveFile>(&a)) txn->removed_files.insert(r->path);
    if (const auto* t = std::get_if<SetTransaction>(&a)) txn->app_ids.insert(t->app_id);
  }
}

Status CheckConflict(const PendingTransaction& txn, const std::vector<Action>& winner,
                     Version winner_version, const std::string& table_root) {
  std::string op = "unknown operation";
  for (const Action& a : winner) {
    if (const auto* ci = std::get_if<CommitInfo>(&a); ci && ci->operation) op = *ci->operation;
  }
  auto conflict = [&](const std::string& kind, const std::string& what) {
    return Status::Conflict(kind + "Exception: concurrent commit " + winner_version.ToString() +
                            " (" + op + ") of Delta table " + table_root + " " + what +
                            ". Retry the operation.");
  };
  for (const Action& a : winner) {
    if (std::holds_alternative<Protocol>(a)) {
      return conflict("ProtocolChanged", "changed the protocol");
    }
    if (std::holds_alternative<Metadata>(a)) {
      return conflict("MetadataChanged", "changed the table metadata (schema or properties)");
    }
    if (const auto* t = std::get_if<SetTransaction>(&a); t && txn.app_ids.count(t->app_id)) {
      return conflict("ConcurrentTransaction", "recorded a transaction for the same appId '" +
                                                   t->app_id + "' (version " +
                                                   std::to_string(t->version) + ")");
    }
    if (const auto* r = std::get_if<RemoveFile>(&a)) {
      if (txn.read.files.count(r->path)) {
        return conflict("ConcurrentDeleteRead",
                        "removed file '" + r->path + "' that this transaction read");
      }
      if (txn.removed_files.count(r->path)) {
        return conflict("ConcurrentDeleteDelete",
                        "removed file '" + r->path + "' that this transaction also removes");
      }
      if (txn.read.whole_table && r->data_change) {
        return conflict("ConcurrentDeleteRead",
                        "removed file '" + r->path + "' of data this transaction read");
      }
    }
  }
  if (txn.blind_append) return Status::OK();
  for (const Action& a : winner) {
    const auto* add = std::get_if<AddFile>(&a);
    if (add == nullptr || !add->data_change) continue;
    if (txn.read.whole_table) {
      return conflict("ConcurrentAppend",
                      "added file '" + add->path + "' to data this transaction read");
    }
    for (const PartitionValues& p : txn.read.partitions) {
      if (PartitionMatches(p, add->partition_values)) {
        return conflict("ConcurrentAppend", "added file '" + add->path + "' to partition " +
                                                FormatPartition(p) + " that this transaction read");
      }
    }
  }
  return Status::OK();
}

}  // namespace sluice::delta
