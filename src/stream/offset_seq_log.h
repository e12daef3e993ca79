// The offset log, offsets/<N> (Spark's OffsetSeqLog): the write-ahead log of the micro-batch
// loop. offsets/<N> is written and made durable before batch N reads any data; it records each
// source's end offset for batch N and the batch metadata (watermark, timestamp, persisted conf)
// so that a restart can re-run batch N exactly. Format (docs/formats/checkpoint.md §offsets):
//
//   v1
//   {"batchWatermarkMs":0,"batchTimestampMs":1700000000000,"conf":{"k":"v"}}
//   5
//   {"logOffset":5}
//   -
//
// every line ended by "\n" (Spark, and Sluice before 2026-12-02, end the last line without one;
// both are read); "-" = that source has no offset yet; line 2 may be empty (no metadata). Version 2
// (read, and written when OffsetSeq::version == 2): metadata may hold more fields
// (sourceMetadataInfo, controlBatchInfo, kept verbatim in `extra`) and each offset line is
// "<sourceId>:<offsetJson>" or "<sourceId>:-"; a v2 entry may name fewer sources than the query
// has (Spark reads the others as without an offset), but Sluice writes a line for every source,
// so one it wrote that names fewer was cut (CheckNoSourceLineLost).
//
// Thread safety: OffsetSeqLog is immutable after construction and safe for concurrent use (see
// BatchLog). The value types are plain data.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/ids.h"
#include "common/result.h"
#include "fs/file_system.h"
#include "stream/batch_log.h"
#include "stream/persisted_conf.h"

namespace sluice::stream {

inline constexpr int kOffsetSeqLogVersion = 1;     // what a new checkpoint writes
inline constexpr int kOffsetSeqLogMaxVersion = 2;  // the highest version read

// Line 2 of offsets/<N> (Spark's OffsetSeqMetadata).
struct OffsetSeqMetadata {
  // The global event-time watermark batch N runs with (the value after batch N-1).
  int64_t batch_watermark_ms = 0;
  // The processing time of batch N (current_timestamp() inside the batch), ms since the epoch.
  int64_t batch_timestamp_ms = 0;
  // The persisted configuration (persisted_conf.h), serialized sorted by key.
  ConfMap conf;
  // Any other fields of the JSON object, in file order, written back verbatim after "conf"
  // (v2's sourceMetadataInfo and controlBatchInfo). An object; empty for v1 logs Sluice writes.
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();

  bool operator==(const OffsetSeqMetadata&) const = default;
};

// One offsets/<N> entry (Spark's OffsetSeq).
struct OffsetSeq {
  int version = kOffsetSeqLogVersion;  // 1 or 2
  // nullopt: line 2 is empty (logs from before Spark 2.1); readers then use defaults.
  std::optional<OffsetSeqMetadata> metadata;
  // One entry per source in plan order (sources/<i>); each is the source's offset as compact
  // JSON text ("5", "{\"logOffset\":5}"), or nullopt when the source has no offset yet ("-").
  std::vector<std::optional<std::string>> offsets;

  bool operator==(const OffsetSeq&) const = default;
};

// {"batchWatermarkMs":..,"batchTimestampMs":..,"conf":{..}} followed by `extra`'s fields.
std::string SerializeOffsetSeqMetadata(const OffsetSeqMetadata& metadata);
// Missing fields take their defaults (0, 0, {}) as in Spark. Conf values that are JSON numbers or
// booleans are kept as their text. Corruption when the text is not a JSON object or a field has
// the wrong type.
Result<OffsetSeqMetadata> ParseOffsetSeqMetadata(std::string_view json);

// The file bytes, each line ended by "\n". InvalidArgument for a version other than 1 or 2, or an
// offset that is empty, is "-", or contains a line break (it would break the line format).
Result<std::string> SerializeOffsetSeq(const OffsetSeq& seq);
// Parses file bytes. Corruption for an empty or incomplete file (no metadata line), malformed
// version line, metadata or offset JSON that does not parse (a torn tail), a bad v2 source id,
// or a torn entry: one written by Sluice (its conf has sluice.* keys) whose last line is a number
// or "-" (which a cut can leave valid: "12" -> "1") and that lacks the final "\n" Sluice writes.
// NotSupported for a version above kOffsetSeqLogMaxVersion. Messages name no file.
Result<OffsetSeq> ParseOffsetSeq(std::string_view bytes);

// For a restart with `num_sources` sources: Corruption ("lost source lines: ...", naming no file)
// when `seq` is a v2 entry Sluice wrote (sluice.* conf keys) that names fewer sources, which only
// a cut at a line's end leaves (v1 entries naming fewer are refused by the restart's own check);
// OK otherwise, Spark's v2 entries naming fewer sources included.
Status CheckNoSourceLineLost(const OffsetSeq& seq, size_t num_sources);

class OffsetSeqLog {
 public:
  // The log in <checkpoint_root>/offsets.
  OffsetSeqLog(std::shared_ptr<fs::FileSystem> fs, const std::string& checkpoint_root);

  // Writes offsets/<id> (create-if-absent). Conflict "... another query is using the checkpoint
  // ..." when it exists; InvalidArgument as SerializeOffsetSeq.
  Status Add(BatchId id, const OffsetSeq& seq, const fs::WriteOptions& options = {}) const;
  // Reads offsets/<id>. NotFound when absent; parse errors carry the file's path.
  Result<OffsetSeq> Get(BatchId id) const;
  // The entry with the largest id, or nullopt for an empty log. A corrupt latest entry is an
  // error (never silently skipped).
  Result<std::optional<std::pair<BatchId, OffsetSeq>>> Latest() const;
  Result<std::vector<BatchId>> ListIds() const { return log_.ListIds(); }
  // Deletes entries with id < threshold; returns how many.
  Result<int64_t> Purge(BatchId threshold) const { return log_.Purge(threshold); }

  const BatchLog& log() const { return log_; }

 private:
  BatchLog log_;
};

}  // namespace sluice::stream
