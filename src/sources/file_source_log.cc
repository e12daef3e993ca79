#include "sources/file_source_log.h"

#include <algorithm>
#include <charconv>

#include <nlohmann/json.hpp>

#include "common/logging.h"

namespace sluice::sources {

namespace {
bool IsCanonicalId(const std::string& name, int64_t* id) {
  if (name.empty() || name.size() > 18) return false;
  if (!std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  if (name.size() > 1 && name[0] == '0') return false;
  std::from_chars(name.data(), name.data() + name.size(), *id);
  return true;
}
}  // namespace

std::string FileSourceLog::Serialize(const std::vector<FileEntry>& entries) {
  std::string out = "v1";
  for (const auto& e : entries) {
    nlohmann::ordered_json j;
    j["path"] = e.path;
    j["timestamp"] = e.timestamp;
    j["batchId"] = e.batch_id;
    j["numFiles"] = static_cast<int64_t>(entries.size());
    out += "\n" + j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return out;
}

Result<std::vector<FileEntry>> FileSourceLog::Parse(const std::string& text,
                                                    const std::string& file, int64_t batch_id) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
    if (nl == std::string::npos) break;
    pos = nl + 1;
    if (pos == text.size()) break;  // a final "\n" starts no line
  }
  const std::string where = "file source log " + file + ": ";
  if (lines.empty() || lines[0].size() < 2 || lines[0][0] != 'v') {
    return Status::Corruption(where + "log file is malformed: failed to read the log version" +
                              (text.empty() ? " (the file is empty)" : ""));
  }
  int64_t version = 0;
  auto [p, ec] = std::from_chars(lines[0].data() + 1, lines[0].data() + lines[0].size(), version);
  if (ec != std::errc() || p != lines[0].data() + lines[0].size() || version < 1) {
    return Status::Corruption(where + "log file is malformed: failed to read the log version");
  }
  if (version > 1) {
    return Status::NotSupported(
        where +
        "unsupported log version: the maximum supported log version is v1, but encountered v" +
        std::to_string(version) + "; upgrade Sluice");
  }
  if (lines.size() == 1) {
    return Status::Corruption(where +
                              "the entry lists no files (it ends after its version line: cut "
                              "short?); an entry is only written for new files");
  }
  std::vector<FileEntry> out;
  std::optional<int64_t> num_files;  // from the first line; every line must agree
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string line_name = "line " + std::to_string(i + 1);
    nlohmann::json j = nlohmann::json::parse(lines[i], nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("path") || !j["path"].is_string() ||
        !j.contains("timestamp") || !j["timestamp"].is_number_integer() || !j.contains("batchId") ||
        !j["batchId"].is_number_integer()) {
      return Status::Corruption(where + line_name + " is not a file entry: '" + lines[i] + "'");
    }
    FileEntry e{j["path"].get<std::string>(), j["timestamp"].get<int64_t>(),
                j["batchId"].get<int64_t>()};
    if (batch_id >= 0 && e.batch_id != batch_id) {
      return Status::Corruption(where + line_name + " has batchId " + std::to_string(e.batch_id) +
                                ", expected " + std::to_string(batch_id) + " (the entry's name)");
    }
    std::optional<int64_t> n;
    if (auto it = j.find("numFiles"); it != j.end()) {
      if (!it->is_number_integer() || it->get<int64_t>() < 1) {
        return Status::Corruption(where + line_name + ": numFiles is not a positive integer: '" +
                                  lines[i] + "'");
      }
      n = it->get<int64_t>();
    }
    if (i == 1) {
      num_files = n;
    } else if (n != num_files) {
      return Status::Corruption(where + line_name + ": numFiles differs from line 2's: '" +
                                lines[i] + "'");
    }
    out.push_back(std::move(e));
  }
  if (num_files && *num_files != static_cast<int64_t>(out.size())) {
    return Status::Corruption(where + "the entry lists " + std::to_string(out.size()) + " of its " +
                              std::to_string(*num_files) +
                              " files (numFiles): it was cut short or edited");
  }
  return out;
}

Status FileSourceLog::Add(int64_t batch_id, const std::vector<FileEntry>& entries) {
  std::string path = fs::JoinPath(dir_, std::to_string(batch_id));
  if (entries.empty()) {
    return Status::InvalidArgument("file source log entry " + path + ": an entry needs files");
  }
  SLUICE_RETURN_NOT_OK(fs_->MaybeCrash("sources.before_file_log_write"));
  Status st = fs_->CreateIfAbsent(path, Serialize(entries));
  if (st.IsAlreadyExists()) {
    return Status::Conflict("file source log entry " + path +
                            " already exists: another query is using the checkpoint concurrently");
  }
  SLUICE_RETURN_NOT_OK_CTX(st, "writing file source log");
  return fs_->MaybeCrash("sources.after_file_log_write");
}

Result<std::vector<FileEntry>> FileSourceLog::Get(int64_t batch_id) {
  std::string path = fs::JoinPath(dir_, std::to_string(batch_id));
  SLUICE_ASSIGN_OR_RETURN_CTX(std::string text, fs_->ReadFile(path), "reading file source log");
  Result<std::vector<FileEntry>> entries = Parse(text, path, batch_id);
  if (!entries.ok() && entries.status().IsCorruption() && damaged_latest_ == batch_id) {
    return Status::Corruption(entries.status().message() +
                              "; a batch was planned with this entry (the checkpoint's offsets "
                              "name it): its files cannot be known. Restore the entry, or start "
                              "the query on a new checkpoint");
  }
  return entries;
}

Result<FileSourceLog::Loaded> FileSourceLog::Load() {
  Loaded out;
  damaged_latest_.reset();
  damage_.clear();
  SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> ids, ListIds());
  for (int64_t id : ids) {
    Result<std::vector<FileEntry>> entries = Get(id);
    if (!entries.ok()) {
      if (entries.status().IsCorruption() && id == ids.back()) {
        damaged_latest_ = id;
        damage_ = entries.status().message();
        out.latest_id = id;
        continue;
      }
      if (entries.status().IsCorruption()) {
        return Status::Corruption(
            entries.status().message() +
            "; a later entry exists, so a batch was planned with this one: its files would be "
            "read again. Restore the entry, or start the query on a new checkpoint");
      }
      return entries.status();
    }
    for (auto& e : *entries) out.paths.push_back(std::move(e.path));
    out.latest_id = id;
  }
  return out;
}

Result<int64_t> FileSourceLog::PrepareToPlan(int64_t planned, int64_t latest) {
  if (!damaged_latest_) return latest;
  const int64_t d = *damaged_latest_;
  if (planned >= d) {
    return Status::Corruption(damage_ + "; the checkpoint's offsets name log entry " +
                              std::to_string(planned) +
                              ", so a batch was planned with this entry: the files it recorded "
                              "cannot be known and would be read again. Restore the entry, or "
                              "start the query on a new checkpoint");
  }
  if (planned < d - 1) return d - 1;
  // No batch was planned with entry d: none of its files reached a batch, so listing them again
  // is exact.
  const std::string path = fs::JoinPath(dir_, std::to_string(d));
  Status st = fs_->DeleteFile(path);
  if (!st.ok() && !st.IsNotFound())
    return st.WithContext("removing a damaged file source log entry");
  SLUICE_LOG(kWarning) << damage_ << "; no batch was planned with it, so it was removed and its "
                       << "files are listed again";
  damaged_latest_.reset();
  damage_.clear();
  return d - 1;
}

Result<std::vector<int64_t>> FileSourceLog::ListIds() {
  auto listing = fs_->List(dir_);
  if (!listing.ok()) {
    if (listing.status().IsNotFound()) return std::vector<int64_t>();
    return listing.status().WithContext("listing file source log");
  }
  std::vector<int64_t> ids;
  for (const auto& f : *listing) {
    if (f.is_directory) continue;
    std::string name = fs::BaseName(f.path);
    if (name.size() > 8 && name.substr(name.size() - 8) == ".compact") {
      return Status::NotSupported(
          "file source log " + f.path +
          ": compacted file source logs (Spark's N.compact) are not supported");
    }
    int64_t id = 0;
    if (IsCanonicalId(name, &id)) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  // Spark's rule for a compacted log: entries below the last compaction live in the .compact
  // file, a gap above it is corruption. Sluice never compacts, so every entry from 0 on exists;
  // a missing one would make its files look new and be read again.
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] != static_cast<int64_t>(i)) {
      return Status::Corruption(
          "file source log " + dir_ + ": entry " + fs::JoinPath(dir_, std::to_string(i)) +
          " is missing (entry " + std::to_string(ids[i]) +
          " exists): the checkpoint is damaged and the files that entry recorded would be read "
          "again; restore the entry, or start the query on a new checkpoint");
    }
  }
  return ids;
}

std::string PathToFileUri(const std::string& absolute_path) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out = "file://";
  for (unsigned char c : absolute_path) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '-' || c == '.' || c == '_' || c == '~' || c == '/' || c == ':' || c == '@' ||
                c == '=' || c == '+' || c == ',' || c == ';' || c == '!' || c == '$' || c == '&' ||
                c == '\'' || c == '(' || c == ')' || c == '*';
    if (keep) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Result<std::string> FileUriToPath(const std::string& uri) {
  std::string rest;
  if (uri.rfind("file://", 0) == 0) {
    rest = uri.substr(7);
  } else if (uri.rfind("file:", 0) == 0) {
    rest = uri.substr(5);
  } else {
    return Status::InvalidArgument("not a file URI: '" + uri + "'");
  }
  std::string out;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() + 0 && i + 2 <= rest.size() - 1) {
      auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
      };
      int h = hex(rest[i + 1]), l = hex(rest[i + 2]);
      if (h < 0 || l < 0)
        return Status::InvalidArgument("bad percent escape in file URI '" + uri + "'");
      out += static_cast<char>(h * 16 + l);
      i += 2;
    } else if (rest[i] == '%') {
      return Status::InvalidArgument("bad percent escape in file URI '" + uri + "'");
    } else {
      out += rest[i];
    }
  }
  return out;
}

}  // namespace sluice::sources
