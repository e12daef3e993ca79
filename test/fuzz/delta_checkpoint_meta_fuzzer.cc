// Fuzz target for the Delta log's checkpoint metadata (src/delta/log_segment.h): the
// `_last_checkpoint` hint and the names of the files in `_delta_log` (commits, classic and
// multi-part checkpoints, and everything a reader must ignore). The input becomes a real
// `_delta_log` directory; the fast listing that starts at the hint (ListLogForLatest) must give
// the same snapshot segment as the full listing (ListLog), because the hint may be stale, cut or
// wrong and must never change which files a snapshot reads. Built by `make fuzz`
// (test/fuzz/CMakeLists.txt), replayed over corpus/delta_checkpoint_meta by `make test`.
//
// Input: the `_last_checkpoint` bytes, then optionally a NUL byte and extra file names separated
// by NUL or '\n' (at most 16, each at most 100 bytes; names with '/' or that are "." or ".." are
// left out). The log always holds commits 0..12, a classic checkpoint at 10 and part 1 of 2 of a
// checkpoint at 5. A crash, an exception, a name that parses but does not name itself again, or
// segments that differ for a log without gaps is a bug (std::abort).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "delta/log_segment.h"
#include "fs/file_system.h"

namespace {

using namespace sluice;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "delta_checkpoint_meta_fuzzer: %s\n", what);
    std::abort();
  }
}

const std::string& WorkDir() {
  static const std::string dir = [] {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "sluice-fuzz-delta-XXXXXX").string();
    Check(::mkdtemp(tmpl.data()) != nullptr, "mkdtemp");
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(WorkDir(), ec);
    });
    return tmpl;
  }();
  return dir;
}

void Touch(const std::string& path, std::string_view bytes = {}) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A name that parses names itself again (the writer's spelling).
void CheckNameRoundTrip(const std::string& name) {
  auto parsed = delta::ParseLogFileName(name);
  if (!parsed) return;
  Check(parsed->version.value() >= 0, "a log file name parsed to a negative version");
  switch (parsed->kind) {
    case delta::LogFileKind::kCommit:
      Check(delta::CommitFileName(parsed->version) == name, "commit name round trip");
      break;
    case delta::LogFileKind::kCheckpoint:
      Check(delta::CheckpointFileName(parsed->version) == name, "checkpoint name round trip");
      break;
    case delta::LogFileKind::kCheckpointPart: {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%020lld.checkpoint.%010d.%010d.parquet",
                    static_cast<long long>(parsed->version.value()), parsed->part,
                    parsed->num_parts);
      Check(buf == name, "checkpoint part name round trip");
      Check(parsed->part >= 1 && parsed->part <= parsed->num_parts, "part numbers");
      break;
    }
    case delta::LogFileKind::kCheckpointV2: {
      // "<version>.checkpoint.<uuid>.json|parquet": the version and the format are the name's.
      char prefix[64];
      std::snprintf(prefix, sizeof(prefix), "%020lld.checkpoint.",
                    static_cast<long long>(parsed->version.value()));
      const std::string suffix = parsed->json ? ".json" : ".parquet";
      Check(name.rfind(prefix, 0) == 0, "V2 checkpoint name: version prefix");
      Check(name.size() > std::strlen(prefix) + suffix.size() &&
                name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0,
            "V2 checkpoint name: format suffix");
      break;
    }
  }
}

// True when every version from the oldest listed one to the latest has a commit or a checkpoint.
bool NoGaps(const delta::LogListing& listing) {
  std::optional<Version> latest = listing.LatestVersion();
  if (!latest) return true;
  int64_t oldest = latest->value();
  if (!listing.commits.empty()) oldest = std::min(oldest, listing.commits.begin()->first.value());
  if (!listing.checkpoints.empty()) {
    oldest = std::min(oldest, listing.checkpoints.begin()->first.value());
  }
  if (latest->value() - oldest > 100000) return false;
  for (int64_t v = oldest; v <= latest->value(); ++v) {
    if (!listing.commits.count(Version(v)) && !listing.checkpoints.count(Version(v))) return false;
  }
  return true;
}

std::string Describe(const Result<delta::LogSegment>& seg) {
  if (!seg.ok()) return "error " + seg.status().ToString();
  std::string out = "v" + seg->version.ToString() + " cp ";
  if (seg->checkpoint) {
    out += seg->checkpoint->version.ToString() + " [";
    for (const auto& f : seg->checkpoint->files) out += f.info.path + " ";
    out += "]";
  } else {
    out += "none";
  }
  out += " commits";
  for (const auto& c : seg->commits) out += " " + c.name.version.ToString();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nul = in.find('\0');
  const std::string_view hint = in.substr(0, nul);
  std::vector<std::string> names;
  if (nul != std::string_view::npos) {
    std::string_view rest = in.substr(nul + 1);
    while (!rest.empty() && names.size() < 16) {
      size_t end = rest.find_first_of(std::string_view("\0\n", 2));
      std::string_view name = rest.substr(0, end);
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
      if (name.empty() || name.size() > 100 || name == "." || name == ".." ||
          name.find('/') != std::string_view::npos) {
        continue;
      }
      names.emplace_back(name);
    }
  }
  for (const std::string& name : names) CheckNameRoundTrip(name);

  const std::string root = WorkDir() + "/table";
  const std::string log = root + "/_delta_log";
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  std::filesystem::create_directories(log);
  for (int v = 0; v <= 12; ++v) Touch(log + "/" + delta::CommitFileName(Version(v)), "{}");
  Touch(log + "/" + delta::CheckpointFileName(Version(10)));
  Touch(log + "/00000000000000000005.checkpoint.0000000001.0000000002.parquet");
  Touch(log + "/_last_checkpoint", hint);
  for (const std::string& name : names) {
    if (name == "_last_checkpoint") continue;
    Touch(log + "/" + name);
  }

  fs::FileSystem* fs = fs::LocalFileSystem().get();
  (void)delta::ReadLastCheckpointHint(fs, log);
  auto full = delta::ListLog(fs, root);
  auto fast = delta::ListLogForLatest(fs, root);
  if (!full.ok()) return 0;  // e.g. a listed name the file system refuses
  Check(fast.ok(), "the fast listing failed where the full one did not");
  if (!NoGaps(*full)) return 0;  // a log with a gap: the listings may differ (log_segment.h)
  const std::string want = Describe(delta::BuildLogSegment(*full, std::nullopt));
  const std::string got = Describe(delta::BuildLogSegment(*fast, std::nullopt));
  if (want != got) {
    std::fprintf(stderr, "full listing: %s\nfrom the hint: %s\n", want.c_str(), got.c_str());
    Check(false, "_last_checkpoint changed the snapshot's segment");
  }
  return 0;
}
