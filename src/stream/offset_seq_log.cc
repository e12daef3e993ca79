#include "stream/offset_seq_log.h"

#include <limits>
#include <set>

#include "stream/checkpoint_layout.h"
#include "stream/json_util.h"

namespace sluice::stream {

namespace {

constexpr std::string_view kVoidOffset = "-";
// A v2 source id above this is taken for corruption rather than allocating a huge vector.
constexpr int64_t kMaxSourceId = 100000;

using Json = nlohmann::ordered_json;

Result<int64_t> GetLong(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) return int64_t{0};
  if (it->is_number_integer()) {
    if (it->is_number_unsigned() &&
        it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Status::Corruption(std::string("field \"") + key + "\" is out of range");
    }
    return it->get<int64_t>();
  }
  return Status::Corruption(std::string("field \"") + key + "\" is not an integer");
}

Status CheckOffsetText(std::string_view offset, size_t index) {
  if (offset.empty() || offset == kVoidOffset ||
      offset.find_first_of("\r\n") != std::string_view::npos) {
    return Status::InvalidArgument(
        "offset of source " + std::to_string(index) + " cannot be written to the offset log: '" +
        std::string(offset.substr(0, 80)) + "' is empty, '-' or contains a line break");
  }
  return Status::OK();
}

// A line a cut could leave valid: a JSON number ("12" cut to "1", "1.5" to "1") or "-" (a cut of
// "-5"). Every other offset a cut leaves unbalanced or unterminated (objects, strings, literals).
bool CutCouldStayValid(std::string_view offset) {
  if (offset == kVoidOffset) return true;
  Json j = ParseJsonNoThrow(offset);
  return !j.is_discarded() && j.is_number();
}

// Sluice's conf keys (persisted_conf.h) mark an entry Sluice wrote; Spark writes spark.* keys.
bool WrittenBySluice(const OffsetSeq& seq) {
  if (!seq.metadata.has_value()) return false;
  for (const auto& [key, value] : seq.metadata->conf) {
    if (key.starts_with("sluice.")) return true;
  }
  return false;
}

// Sluice ends every entry with "\n"; Spark (and Sluice before 2026-12) end the last line without
// one. An entry Sluice wrote whose last line is an offset a cut could leave valid, and that lacks
// the final line break, was cut after it was written: refused, never read as a smaller offset.
Status CheckNotCut(std::string_view bytes, const OffsetSeq& seq, size_t line_count,
                   std::string_view last_offset) {
  if (bytes.ends_with('\n') || line_count <= 2 || !WrittenBySluice(seq) ||
      !CutCouldStayValid(last_offset)) {
    return Status::OK();
  }
  return Status::Corruption(
      "torn entry: its last line (line " + std::to_string(line_count) + ", '" +
      std::string(last_offset.substr(0, 80)) +
      "') ends without the line break Sluice writes after every line, so the file was cut "
      "after it was written and that offset may be shorter than the one recorded; restore the "
      "file from a copy (an entry written by a Sluice from before 2026-12-02 has no final line "
      "break: only if this one is known to be whole, append one to it)");
}

// JSON never holds a raw NUL byte, but the JSON parser takes one for the end of its input, so
// "{...}\0<anything>" would be read as "{...}" (found by the checkpoint_log fuzz target).
Status CheckNoNulByte(std::string_view bytes) {
  const size_t nul = bytes.find('\0');
  if (nul == std::string_view::npos) return Status::OK();
  return Status::Corruption("the file holds a NUL byte at byte offset " + std::to_string(nul) +
                            ", which no log entry Spark or Sluice writes does (damaged file?)");
}

Status CheckOffsetJson(std::string_view text, size_t index) {
  if (ParseJsonNoThrow(text).is_discarded()) {
    return Status::Corruption("offset of source " + std::to_string(index) +
                              " is not valid JSON (torn file?): '" +
                              std::string(text.substr(0, 80)) + "'");
  }
  return Status::OK();
}

}  // namespace

std::string SerializeOffsetSeqMetadata(const OffsetSeqMetadata& metadata) {
  Json j = Json::object();
  j["batchWatermarkMs"] = metadata.batch_watermark_ms;
  j["batchTimestampMs"] = metadata.batch_timestamp_ms;
  Json conf = Json::object();
  for (const auto& [k, v] : metadata.conf) conf[k] = v;
  j["conf"] = std::move(conf);
  if (metadata.extra.is_object()) {
    for (const auto& [k, v] : metadata.extra.items()) {
      if (k != "batchWatermarkMs" && k != "batchTimestampMs" && k != "conf") j[k] = v;
    }
  }
  return DumpJson(j);
}

Result<OffsetSeqMetadata> ParseOffsetSeqMetadata(std::string_view json) {
  return CatchJsonExceptions("batch metadata", [&]() -> Result<OffsetSeqMetadata> {
    Json j = ParseJsonNoThrow(json);
    if (j.is_discarded())
      return Status::Corruption("batch metadata is not valid JSON (torn file?)");
    if (!j.is_object()) return Status::Corruption("batch metadata is not a JSON object");
    OffsetSeqMetadata md;
    SLUICE_ASSIGN_OR_RETURN(md.batch_watermark_ms, GetLong(j, "batchWatermarkMs"));
    SLUICE_ASSIGN_OR_RETURN(md.batch_timestamp_ms, GetLong(j, "batchTimestampMs"));
    auto conf = j.find("conf");
    if (conf != j.end() && !conf->is_null()) {
      if (!conf->is_object()) return Status::Corruption("batch metadata \"conf\" is not an object");
      for (const auto& [k, v] : conf->items()) {
        if (v.is_string()) {
          md.conf[k] = v.get<std::string>();
        } else if (v.is_number() || v.is_boolean()) {
          md.conf[k] = DumpJson(v);
        } else {
          return Status::Corruption("batch metadata conf value of '" + k + "' is not a string");
        }
      }
    }
    for (const auto& [k, v] : j.items()) {
      if (k != "batchWatermarkMs" && k != "batchTimestampMs" && k != "conf") md.extra[k] = v;
    }
    return md;
  });
}

Result<std::string> SerializeOffsetSeq(const OffsetSeq& seq) {
  if (seq.version != 1 && seq.version != 2) {
    return Status::InvalidArgument("offset log version v" + std::to_string(seq.version) +
                                   " cannot be written (supported: v1, v2)");
  }
  std::string out = "v" + std::to_string(seq.version);
  out += '\n';
  if (seq.metadata.has_value()) out += SerializeOffsetSeqMetadata(*seq.metadata);
  for (size_t i = 0; i < seq.offsets.size(); ++i) {
    const std::optional<std::string>& offset = seq.offsets[i];
    if (offset.has_value()) SLUICE_RETURN_NOT_OK(CheckOffsetText(*offset, i));
    if (seq.version == 1) {
      out += '\n';
      out += offset.has_value() ? std::string_view(*offset) : kVoidOffset;
    } else {  // v2: every source has a line, "<id>:-" without an offset (as Spark 4 writes)
      out += '\n';
      out += std::to_string(i);
      out += ':';
      out += offset.has_value() ? std::string_view(*offset) : kVoidOffset;
    }
  }
  out += '\n';  // the end of the entry: a cut of its last line is detected (CheckNotCut)
  return out;
}

Result<OffsetSeq> ParseOffsetSeq(std::string_view bytes) {
  SLUICE_RETURN_NOT_OK(CheckNoNulByte(bytes));
  std::vector<std::string_view> lines = SplitLogLines(bytes);
  if (lines.empty()) return Status::Corruption("incomplete log file: the file is empty");
  OffsetSeq seq;
  SLUICE_ASSIGN_OR_RETURN(seq.version, ParseLogVersion(lines[0], kOffsetSeqLogMaxVersion));
  if (lines.size() < 2) {
    return Status::Corruption("incomplete log file: the batch metadata line is missing");
  }
  std::string_view md = lines[1];
  while (!md.empty() && (md.front() == ' ' || md.front() == '\t')) md.remove_prefix(1);
  while (!md.empty() && (md.back() == ' ' || md.back() == '\t')) md.remove_suffix(1);
  if (!md.empty()) {
    SLUICE_ASSIGN_OR_RETURN(OffsetSeqMetadata parsed, ParseOffsetSeqMetadata(md));
    seq.metadata = std::move(parsed);
  }
  if (seq.version == 1) {
    for (size_t i = 2; i < lines.size(); ++i) {
      const size_t source = i - 2;
      if (lines[i] == kVoidOffset) {
        seq.offsets.emplace_back(std::nullopt);
        continue;
      }
      if (lines[i].empty()) {
        return Status::Corruption("offset line of source " + std::to_string(source) + " is empty");
      }
      SLUICE_RETURN_NOT_OK(CheckOffsetJson(lines[i], source));
      seq.offsets.emplace_back(std::string(lines[i]));
    }
    SLUICE_RETURN_NOT_OK(CheckNotCut(bytes, seq, lines.size(), lines.back()));
    return seq;
  }
  // v2: "<sourceId>:<offsetJson>"
  std::set<int64_t> seen;
  for (size_t i = 2; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    size_t colon = line.find(':');
    std::optional<BatchId> id =
        colon == std::string_view::npos ? std::nullopt : ParseBatchFileName(line.substr(0, colon));
    if (!id.has_value() || id->value() > kMaxSourceId) {
      return Status::Corruption("offset line " + std::to_string(i + 1) +
                                " has no valid '<sourceId>:' prefix: '" +
                                std::string(line.substr(0, 80)) + "'");
    }
    const int64_t source = id->value();
    if (!seen.insert(source).second) {
      return Status::Corruption("source id " + std::to_string(source) + " appears twice");
    }
    if (seq.offsets.size() <= static_cast<size_t>(source)) {
      seq.offsets.resize(static_cast<size_t>(source) + 1);
    }
    std::string_view offset = line.substr(colon + 1);
    if (offset == kVoidOffset) continue;
    if (offset.empty()) {
      return Status::Corruption("offset of source " + std::to_string(source) + " is empty");
    }
    SLUICE_RETURN_NOT_OK(CheckOffsetJson(offset, static_cast<size_t>(source)));
    seq.offsets[static_cast<size_t>(source)] = std::string(offset);
  }
  if (lines.size() > 2) {
    std::string_view last = lines.back();
    SLUICE_RETURN_NOT_OK(CheckNotCut(bytes, seq, lines.size(), last.substr(last.find(':') + 1)));
  }
  return seq;
}

Status CheckNoSourceLineLost(const OffsetSeq& seq, size_t num_sources) {
  const size_t named = seq.offsets.size();
  if (seq.version < 2 || named >= num_sources || !WrittenBySluice(seq)) return Status::OK();
  std::string missing;
  for (size_t i = named; i < num_sources && i < named + 8; ++i) {
    missing += (missing.empty() ? "" : ", ") + std::to_string(i) + ":-";
  }
  if (num_sources > named + 8) missing += ", ...";
  return Status::Corruption(
      "lost source lines: the entry names " + std::to_string(named) + " of the query's " +
      std::to_string(num_sources) +
      " sources, but Sluice writes a line for every source of a v2 entry ('<id>:-' for one "
      "without an offset), so the file was cut at a line's end after it was written and "
      "source " +
      std::to_string(named) +
      " would start again from its beginning; restore the file from a copy (an entry written "
      "by a Sluice from before 2026-12-02 has no lines for trailing sources without an offset: "
      "only if this one is known to be whole, append the lines " +
      missing + ")");
}

OffsetSeqLog::OffsetSeqLog(std::shared_ptr<fs::FileSystem> fs, const std::string& checkpoint_root)
    : log_(std::move(fs), OffsetsDir(checkpoint_root), checkpoint_root) {}

Status OffsetSeqLog::Add(BatchId id, const OffsetSeq& seq, const fs::WriteOptions& options) const {
  SLUICE_ASSIGN_OR_RETURN_CTX(std::string bytes, SerializeOffsetSeq(seq),
                              "writing offset log entry " + log_.PathFor(id));
  return log_.Add(id, bytes, options);
}

Result<OffsetSeq> OffsetSeqLog::Get(BatchId id) const {
  SLUICE_ASSIGN_OR_RETURN(std::string bytes, log_.Read(id));
  return ParseOffsetSeq(bytes).WithContext("offset log file " + log_.PathFor(id));
}

Result<std::optional<std::pair<BatchId, OffsetSeq>>> OffsetSeqLog::Latest() const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchId> ids, log_.ListIds());
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    Result<OffsetSeq> seq = Get(*it);
    if (seq.ok()) return std::optional<std::pair<BatchId, OffsetSeq>>(std::pair(*it, *seq));
    if (!seq.status().IsNotFound()) return seq.status();
    // Deleted between listing and reading (a concurrent purge): try the next older one.
  }
  return std::optional<std::pair<BatchId, OffsetSeq>>();
}

}  // namespace sluice::stream
