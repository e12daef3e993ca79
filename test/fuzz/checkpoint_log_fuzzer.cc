// Fuzz target for the checkpoint's logs (docs/formats/checkpoint.md, sources.md): offsets/<N>,
// commits/<N>, metadata, the files-source log sources/<i>/<N> and the rate/Nexmark start file.
// Built by `make fuzz` (test/fuzz/CMakeLists.txt: libFuzzer with clang, else the standalone
// driver) and replayed over its corpus (test/fuzz/corpus/checkpoint_log) by `make test`.
//
// The first byte picks the parser ('0' offsets, '1' commits v1, '2' commits v2, '3' metadata,
// '4' files-source log, '5' start time); the rest is the file. A crash, an exception, or an
// accepted file that does not survive serialization and parsing again unchanged is a bug
// (std::abort).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sources/file_source_log.h"
#include "sources/start_time_file.h"
#include "stream/checkpoint_metadata.h"
#include "stream/commit_log.h"
#include "stream/json_util.h"
#include "stream/offset_seq_log.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

bool SameEntries(const std::vector<sluice::sources::FileEntry>& a,
                 const std::vector<sluice::sources::FileEntry>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].path != b[i].path || a[i].timestamp != b[i].timestamp ||
        a[i].batch_id != b[i].batch_id) {
      return false;
    }
  }
  return true;
}

bool SluiceEntry(const sluice::stream::OffsetSeq& seq) {
  if (!seq.metadata) return false;
  for (const auto& kv : seq.metadata->conf) {
    if (kv.first.starts_with("sluice.")) return true;
  }
  return false;
}

// The same entry up to the spelling of its JSON offsets (blanks around a value).
bool SameMeaning(const sluice::stream::OffsetSeq& a, const sluice::stream::OffsetSeq& b) {
  if (a.version != b.version || a.metadata != b.metadata || a.offsets.size() != b.offsets.size()) {
    return false;
  }
  for (size_t i = 0; i < a.offsets.size(); ++i) {
    if (a.offsets[i].has_value() != b.offsets[i].has_value()) return false;
    if (!a.offsets[i]) continue;
    auto ja = sluice::stream::ParseJsonNoThrow(*a.offsets[i]);
    auto jb = sluice::stream::ParseJsonNoThrow(*b.offsets[i]);
    if (ja.is_discarded() || jb.is_discarded() || ja != jb) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0: {
      auto seq = stream::ParseOffsetSeq(bytes);
      if (!seq.ok()) break;
      auto text = stream::SerializeOffsetSeq(*seq);
      if (!text.ok()) break;  // e.g. a v2 offset the v1 line format cannot hold
      auto again = stream::ParseOffsetSeq(*text);
      Check(again.ok() && *again == *seq);  // v2 writes "<id>:-" lines: nothing is dropped
      auto text2 = stream::SerializeOffsetSeq(*again);
      Check(text2.ok() && *text2 == *text);
      // A proper prefix of what Sluice writes (its conf keys mark it) is never read as another
      // entry of the same query: it is refused by the parser, means the same entry (a cut in
      // blanks after a JSON offset), or names fewer sources, which the restart refuses (for v1
      // by its count check, for v2 by CheckNoSourceLineLost). A cut need not be at a line's
      // end for that: "{..}   " cut in its blanks leaves "{..} " as the last line.
      if (!SluiceEntry(*again)) break;
      for (size_t cut = 0; cut < text->size() && cut < 4096; ++cut) {
        auto prefix = stream::ParseOffsetSeq(std::string_view(*text).substr(0, cut));
        if (!prefix.ok() || SameMeaning(*prefix, *again)) continue;
        Check(prefix->offsets.size() < again->offsets.size());
        Check(prefix->version == 1 ||
              !stream::CheckNoSourceLineLost(*prefix, again->offsets.size()).ok());
      }
      break;
    }
    case 1:
    case 2: {
      const int version = data[0] % 6;
      auto commit = stream::ParseCommit(bytes, version);
      if (!commit.ok()) break;
      auto text = stream::SerializeCommit(*commit, version);
      Check(text.ok());  // (a v1 entry with stateUniqueIds is refused on read since 2026-12-02)
      auto again = stream::ParseCommit(*text, version);
      Check(again.ok() && *again == *commit);
      break;
    }
    case 3: {
      auto meta = stream::ParseStreamMetadata(bytes);
      if (!meta.ok()) break;
      auto again = stream::ParseStreamMetadata(stream::SerializeStreamMetadata(*meta));
      Check(again.ok() && *again == *meta);
      break;
    }
    case 4: {
      auto entries = sources::FileSourceLog::Parse(std::string(bytes), "fuzz/0");
      if (!entries.ok()) break;
      Check(!entries->empty());
      const std::string text = sources::FileSourceLog::Serialize(*entries);
      auto again = sources::FileSourceLog::Parse(text, "fuzz/0");
      Check(again.ok() && SameEntries(*again, *entries));
      // What Sluice writes detects every cut (numFiles): no proper prefix parses.
      for (size_t cut = 0; cut < text.size() && cut < 4096; ++cut) {
        Check(!sources::FileSourceLog::Parse(text.substr(0, cut), "fuzz/0").ok());
      }
      break;
    }
    default: {
      auto start = sources::ParseStartTime(std::string(bytes), "fuzz start file");
      if (!start.ok()) break;
      const std::string text = sources::SerializeStartTime(*start);
      auto again = sources::ParseStartTime(text, "fuzz start file");
      Check(again.ok() && *again == *start);
      // A cut is detected for every start time a clock gives before 2286 (< 10^13 ms: the padded
      // number starts with zeros, so no cut leaves 13 digits without a leading zero).
      if (*start >= 10'000'000'000'000) break;
      for (size_t cut = 0; cut < text.size(); ++cut) {
        Check(!sources::ParseStartTime(text.substr(0, cut), "fuzz start file").ok());
      }
      break;
    }
  }
  return 0;
}
