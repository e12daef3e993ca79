// The schema log of a Delta streaming source (Delta's "schema tracking location", the option
// schemaTrackingLocation; docs/delta.md "Streaming across RENAME / DROP COLUMN"): the schemas a
// stream has read a table with, one entry per change, so that a stream can continue across a
// RENAME or DROP COLUMN. Entries are files named by their index (0, 1, ...) under
// <location>/_schema_log_<tableId>/, in Delta's format: a "v1" line, then one JSON object with
// tableId, deltaCommitVersion, dataSchemaJson, partitionSchemaJson, sourceMetadataPath,
// tableConfigurations, protocolJson and previousMetadataSeqNum (the last three optional when
// read; Delta writes previousMetadataSeqNum on an entry that merges consecutive schema
// changes: the entry the series started from). Delta's own `.N.crc`
// files beside them are ignored.
//
// This file reads and appends entries; the Delta source (delta_source.h, option
// schemaTrackingLocation) uses them as docs/delta.md describes.
//
// Ownership: shares the FileSystem. Thread safety: none (one source uses it).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "fs/file_system.h"

namespace sluice::sources {

struct SchemaLogEntry {
  std::string table_id;
  int64_t delta_commit_version = 0;  // the table version whose schema this is
  std::string data_schema_json;      // schemaString form, column mapping metadata included
  std::string partition_schema_json;
  std::string source_metadata_path;
  std::map<std::string, std::string> table_configurations;
  std::optional<std::string> protocol_json;  // {"protocol": {...}}
  // The entry this one follows for the unblock check (Delta's previousMetadataSeqNum); nullopt:
  // the entry before it.
  std::optional<int64_t> previous_metadata_seq_num;
};

// One entry's file text and back. Parse: Corruption naming `where` for a missing "v1" line,
// JSON that is not an object, or a missing or mistyped field.
std::string SerializeSchemaLogEntry(const SchemaLogEntry& entry);
Result<SchemaLogEntry> ParseSchemaLogEntry(std::string_view text, const std::string& where);

class DeltaSchemaLog {
 public:
  // The log of table `table_id` under `location`.
  DeltaSchemaLog(std::shared_ptr<fs::FileSystem> fs, std::string location, std::string table_id);

  const std::string& dir() const { return dir_; }

  // The entry with the highest index, with that index; nullopt when the log has none. An entry
  // whose tableId is not this log's is Corruption (the location belongs to another table).
  Result<std::optional<std::pair<int64_t, SchemaLogEntry>>> Latest();
  // The entry at `index`; NotFound when absent.
  Result<SchemaLogEntry> Get(int64_t index);
  // Writes `entry` as index `index` (Latest's + 1, or 0), only if absent: AlreadyExists when
  // another writer made that index first.
  Status Append(int64_t index, const SchemaLogEntry& entry);

 private:
  std::shared_ptr<fs::FileSystem> fs_;
  std::string dir_;
  std::string table_id_;
};

}  // namespace sluice::sources
