#include "delta/log_segment.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

namespace sluice::delta {

namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The value of a string of digits, or nullopt above `max` (a 20-digit version can exceed int64:
// "80000000000000000013.json" names no version a Delta writer can reach).
std::optional<int64_t> ToInt(std::string_view digits, int64_t max) {
  int64_t v = 0;
  for (char c : digits) {
    const int d = c - '0';
    if (v > (max - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

std::string Pad(int64_t v, int width) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%0*lld", width, static_cast<long long>(v));
  return buf;
}

std::string Basename(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string VersionList(const std::vector<Version>& versions) {
  std::string s = "[";
  for (size_t i = 0; i < versions.size(); ++i) {
    if (i > 0) s += ", ";
    s += versions[i].ToString();
  }
  return s + "]";
}

// For "checkpoint.<uuid>.json" / "checkpoint.<uuid>.parquet": the uuid and whether it is JSON.
std::optional<std::pair<std::string_view, bool>> V2CheckpointUuid(std::string_view rest) {
  constexpr std::string_view kPrefix = "checkpoint.";
  if (rest.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  rest.remove_prefix(kPrefix.size());
  bool json = false;
  if (rest.size() == 36 + 5 && rest.substr(36) == ".json") {
    json = true;
  } else if (!(rest.size() == 36 + 8 && rest.substr(36) == ".parquet")) {
    return std::nullopt;
  }
  std::string_view uuid = rest.substr(0, 36);
  for (size_t i = 0; i < uuid.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? uuid[i] != '-' : !std::isxdigit(static_cast<unsigned char>(uuid[i]))) {
      return std::nullopt;
    }
  }
  return std::make_pair(uuid, json);
}

}  // namespace

std::optional<LogFileName> ParseLogFileName(std::string_view name) {
  if (name.size() < 21 || !AllDigits(name.substr(0, 20)) || name[20] != '.') return std::nullopt;
  // A version above int64's range is no log file of any table (Delta's versions are longs): the
  // name is ignored like any other file that is not a commit or checkpoint.
  std::optional<int64_t> version = ToInt(name.substr(0, 20), INT64_MAX);
  if (!version) return std::nullopt;
  LogFileName out;
  out.version = Version(*version);
  std::string_view rest = name.substr(21);
  if (rest == "json") {
    out.kind = LogFileKind::kCommit;
    return out;
  }
  if (rest == "checkpoint.parquet") {
    out.kind = LogFileKind::kCheckpoint;
    return out;
  }
  // checkpoint.<uuid>.json / checkpoint.<uuid>.parquet (V2, the uuid 8-4-4-4-12 hex digits)
  if (auto uuid = V2CheckpointUuid(rest)) {
    out.kind = LogFileKind::kCheckpointV2;
    out.json = uuid->second;
    return out;
  }
  // checkpoint.%010d.%010d.parquet
  constexpr std::string_view kPrefix = "checkpoint.";
  constexpr std::string_view kSuffix = ".parquet";
  if (rest.size() == kPrefix.size() + 10 + 1 + 10 + kSuffix.size() &&
      rest.substr(0, kPrefix.size()) == kPrefix &&
      rest.substr(rest.size() - kSuffix.size()) == kSuffix) {
    std::string_view part = rest.substr(kPrefix.size(), 10);
    std::string_view parts = rest.substr(kPrefix.size() + 11, 10);
    if (rest[kPrefix.size() + 10] == '.' && AllDigits(part) && AllDigits(parts)) {
      std::optional<int64_t> p = ToInt(part, INT32_MAX);
      std::optional<int64_t> n = ToInt(parts, INT32_MAX);
      if (!p || !n) return std::nullopt;  // 10 digits may exceed the int32 Delta's writers use
      out.kind = LogFileKind::kCheckpointPart;
      out.part = static_cast<int32_t>(*p);
      out.num_parts = static_cast<int32_t>(*n);
      if (out.part >= 1 && out.part <= out.num_parts) return out;
    }
  }
  return std::nullopt;
}

std::string CommitFileName(Version version) { return Pad(version.value(), 20) + ".json"; }
std::string CheckpointFileName(Version version) {
  return Pad(version.value(), 20) + ".checkpoint.parquet";
}

std::optional<Version> LogListing::LatestVersion() const {
  std::optional<Version> latest;
  if (!commits.empty()) latest = commits.rbegin()->first;
  if (!checkpoints.empty() && (!latest || checkpoints.rbegin()->first > *latest)) {
    latest = checkpoints.rbegin()->first;
  }
  return latest;
}

std::optional<Version> LogListing::EarliestRecreatableVersion() const {
  auto latest = LatestVersion();
  if (!latest) return std::nullopt;
  // Walk down from the latest version while commits are contiguous; the earliest start point
  // is 0 (if reached) or the oldest checkpoint inside the contiguous run.
  Version v = *latest;
  std::optional<Version> earliest;
  if (checkpoints.count(v)) earliest = v;
  while (commits.count(v)) {
    if (checkpoints.count(v)) earliest = v;
    if (v.value() == 0) return Version(0);
    // v's commit exists; v-1 must be present as a commit, or be a checkpoint to start from.
    Version prev = v.Prev();
    if (checkpoints.count(prev)) earliest = prev;
    if (!commits.count(prev)) break;
    v = prev;
  }
  return earliest;
}

namespace {

std::string TrimTrailingSlashes(std::string root) {
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root;
}

Status ListError(const Status& status, const std::string& log_dir) {
  if (status.IsNotFound()) {
    return Status::NotFound("not a Delta table: " + log_dir + " does not exist");
  }
  return status.WithContext("listing " + log_dir);
}

// Classifies `entries` into `listing` (commits, complete checkpoints). Entries below
// `min_version` are skipped.
void AddEntries(const std::vector<fs::FileInfo>& entries, Version min_version,
                LogListing* listing) {
  std::map<Version, std::map<int32_t, std::vector<LogFile>>>
      parts;                      // version -> num_parts -> files
  std::map<Version, LogFile> v2;  // version -> the first UUID-named checkpoint by name
  for (const fs::FileInfo& info : entries) {
    if (info.is_directory) continue;
    auto name = ParseLogFileName(Basename(info.path));
    if (!name || name->version < min_version) continue;
    LogFile file{info, *name};
    switch (name->kind) {
      case LogFileKind::kCommit:
        listing->commits[name->version] = file;
        break;
      case LogFileKind::kCheckpoint:
        listing->checkpoints[name->version] = Checkpoint{name->version, {file}};
        break;
      case LogFileKind::kCheckpointPart:
        parts[name->version][name->num_parts].push_back(file);
        break;
      case LogFileKind::kCheckpointV2: {
        auto [it, inserted] = v2.emplace(name->version, file);
        if (!inserted && Basename(info.path) < Basename(it->second.info.path)) it->second = file;
        break;
      }
    }
  }
  for (auto& [version, by_count] : parts) {
    if (listing->checkpoints.count(version)) continue;  // prefer the classic single file
    for (auto& [num_parts, files] : by_count) {
      std::map<int32_t, LogFile> by_part;
      for (const LogFile& f : files) by_part[f.name.part] = f;
      if (static_cast<int32_t>(by_part.size()) != num_parts) continue;  // incomplete: ignore
      Checkpoint cp{version, {}};
      for (auto& [p, f] : by_part) cp.files.push_back(f);
      listing->checkpoints[version] = std::move(cp);
      break;
    }
  }
  for (auto& [version, file] : v2) {
    if (!listing->checkpoints.count(version)) listing->checkpoints[version] = {version, {file}};
  }
}

}  // namespace

Result<LogListing> ListLog(fs::FileSystem* fs, const std::string& table_root) {
  LogListing listing;
  listing.table_root = TrimTrailingSlashes(table_root);
  listing.log_dir = fs::JoinPath(listing.table_root, "_delta_log");
  auto entries = fs->List(listing.log_dir);
  if (!entries.ok()) return ListError(entries.status(), listing.log_dir);
  AddEntries(*entries, Version(0), &listing);
  if (listing.commits.empty() && listing.checkpoints.empty()) {
    return Status::NotFound("not a Delta table: no commits or checkpoints in " + listing.log_dir);
  }
  return listing;
}

std::optional<Version> ReadLastCheckpointHint(fs::FileSystem* fs, const std::string& log_dir) {
  auto text = fs->ReadFile(fs::JoinPath(log_dir, "_last_checkpoint"));
  if (!text.ok()) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto it = j.find("version");
  if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() < 0) return std::nullopt;
  return Version(it->get<int64_t>());
}

Result<LogListing> ListLogForLatest(fs::FileSystem* fs, const std::string& table_root,
                                    std::optional<Version> known_version) {
  LogListing listing;
  listing.table_root = TrimTrailingSlashes(table_root);
  listing.log_dir = fs::JoinPath(listing.table_root, "_delta_log");
  std::optional<Version> from = known_version;
  if (!from) from = ReadLastCheckpointHint(fs, listing.log_dir);
  if (!from) return ListLog(fs, table_root);
  // Lists the names starting with `prefix` (versions sharing its leading digits) and says
  // whether the last version of that range exists, i.e. whether the log may go on after it.
  auto list_range = [&](int64_t range_index, int digits) -> Result<bool> {
    auto entries = fs->List(listing.log_dir, Pad(range_index, digits));
    if (!entries.ok()) return ListError(entries.status(), listing.log_dir);
    AddEntries(*entries, *from, &listing);
    int64_t range_size = digits == 19 ? 10 : 100;
    Version range_end(range_index * range_size + range_size - 1);
    return listing.commits.count(range_end) > 0 || listing.checkpoints.count(range_end) > 0;
  };
  // First the ten versions that share all but the last digit with `from` (a cached version or a
  // checkpoint usually has few commits after it), then whole hundreds while each one is full.
  SLUICE_ASSIGN_OR_RETURN(bool more, list_range(from->value() / 10, 19));
  for (int64_t hundred = from->value() / 100; more; ++hundred) {
    SLUICE_ASSIGN_OR_RETURN(more, list_range(hundred, 18));
  }
  // The start must be usable: a cached version's commit (or a checkpoint at it), or the hinted
  // checkpoint complete. Anything else (cleaned up, re-created table, stale hint past the end)
  // needs the whole picture.
  bool usable = known_version ? (listing.commits.count(*from) || listing.checkpoints.count(*from))
                              : listing.checkpoints.count(*from) > 0;
  if (!usable) return ListLog(fs, table_root);
  listing.listed_from = *from;
  return listing;
}

Result<LogSegment> BuildLogSegment(const LogListing& listing, std::optional<Version> version) {
  auto latest = listing.LatestVersion();
  if (!latest) return Status::NotFound("empty Delta log in " + listing.log_dir);
  Version target = version.value_or(*latest);
  auto earliest = listing.EarliestRecreatableVersion();
  if (target > *latest || target.value() < 0) {
    return Status::NotFound("Cannot time travel Delta table to version " + target.ToString() +
                            ". Available versions: [" + (earliest ? earliest->ToString() : "?") +
                            ", " + latest->ToString() + "].");
  }
  LogSegment seg;
  seg.version = target;
  // Newest complete checkpoint <= target.
  auto it = listing.checkpoints.upper_bound(target);
  if (it != listing.checkpoints.begin()) {
    --it;
    seg.checkpoint = it->second;
  }
  int64_t start = seg.checkpoint ? seg.checkpoint->version.value() + 1 : 0;
  if (!seg.checkpoint && !listing.commits.count(Version(0))) {
    if (earliest && target < *earliest) {
      return Status::NotFound("Cannot time travel Delta table to version " + target.ToString() +
                              ". Available versions: [" + earliest->ToString() + ", " +
                              latest->ToString() +
                              "]. The log before the earliest checkpoint has been cleaned up.");
    }
    return Status::Corruption("no checkpoint at or before version " + target.ToString() +
                              " and no commit 0 in " + listing.log_dir);
  }
  std::vector<Version> present;
  bool gap = false;
  for (auto c = listing.commits.lower_bound(Version(start));
       c != listing.commits.end() && c->first <= target; ++c) {
    present.push_back(c->first);
  }
  int64_t expect = start;
  for (Version v : present) {
    if (v.value() != expect) gap = true;
    expect = v.value() + 1;
  }
  if (expect != target.value() + 1) gap = true;
  if (gap) {
    return Status::Corruption("versions are not contiguous: " + VersionList(present) + " (need " +
                              std::to_string(start) + ".." + target.ToString() + ") in " +
                              listing.log_dir);
  }
  for (Version v : present) seg.commits.push_back(listing.commits.at(v));
  return seg;
}

}  // namespace sluice::delta
