// Delta log actions (PROTOCOL.md "Actions"): the typed form of one line of a commit file or one
// row of a checkpoint, shared by the reader (log replay) and the writer (commits, checkpoints).
//
// Parsing is lenient as the protocol requires: unknown actions and unknown fields are ignored.
// Missing required fields are Corruption. Serialization writes the exact Delta JSON shapes
// (camelCase keys, one action per line) so a writer can emit commits with these types.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/result.h"

namespace sluice::delta {

// Partition column name -> value as written in the log; nullopt is a null partition value.
using PartitionValues = std::map<std::string, std::optional<std::string>>;
// add/remove/cdc tags (string -> string; null values are kept as nullopt).
using Tags = std::map<std::string, std::optional<std::string>>;

struct Protocol {
  int32_t min_reader_version = 1;
  int32_t min_writer_version = 2;
  // Present iff min_reader_version == 3 / min_writer_version == 7.
  std::optional<std::vector<std::string>> reader_features;
  std::optional<std::vector<std::string>> writer_features;

  bool operator==(const Protocol&) const = default;
};

struct Format {
  std::string provider = "parquet";
  std::map<std::string, std::string> options;

  bool operator==(const Format&) const = default;
};

struct Metadata {
  std::string id;
  std::optional<std::string> name;
  std::optional<std::string> description;
  Format format;
  // Spark schema JSON (see schema.h). Empty when an old log omitted it.
  std::string schema_string;
  std::vector<std::string> partition_columns;
  std::map<std::string, std::string> configuration;
  std::optional<int64_t> created_time;  // ms since epoch

  // configuration[key] or nullopt.
  std::optional<std::string> Config(const std::string& key) const;
  // True when configuration[key] is "true" (case-insensitive).
  bool ConfigIsTrue(const std::string& key) const;

  bool operator==(const Metadata&) const = default;
};

struct DeletionVector {
  std::string storage_type;  // "u", "i" or "p"
  std::string path_or_inline_dv;
  std::optional<int32_t> offset;
  int32_t size_in_bytes = 0;
  int64_t cardinality = 0;

  // storageType + pathOrInlineDv [+ "@" + offset]: the replay key component.
  std::string UniqueId() const;

  bool operator==(const DeletionVector&) const = default;
};

struct AddFile {
  std::string path;  // as in the log: a URI, still percent-encoded
  PartitionValues partition_values;
  int64_t size = 0;
  int64_t modification_time = 0;  // ms since epoch
  bool data_change = true;
  std::optional<std::string> stats;  // JSON text (numRecords, minValues, maxValues, nullCount)
  Tags tags;
  std::optional<DeletionVector> deletion_vector;
  std::optional<int64_t> base_row_id;
  std::optional<int64_t> default_row_commit_version;
  std::optional<std::string> clustering_provider;

  bool operator==(const AddFile&) const = default;
};

struct RemoveFile {
  std::string path;
  std::optional<int64_t> deletion_timestamp;  // ms since epoch
  bool data_change = true;
  std::optional<bool> extended_file_metadata;
  std::optional<PartitionValues> partition_values;
  std::optional<int64_t> size;
  std::optional<std::string> stats;
  Tags tags;
  std::optional<DeletionVector> deletion_vector;
  std::optional<int64_t> base_row_id;
  std::optional<int64_t> default_row_commit_version;

  bool operator==(const RemoveFile&) const = default;
};

struct AddCdcFile {
  std::string path;
  PartitionValues partition_values;
  int64_t size = 0;
  bool data_change = false;
  Tags tags;

  bool operator==(const AddCdcFile&) const = default;
};

struct SetTransaction {
  std::string app_id;
  int64_t version = 0;
  std::optional<int64_t> last_updated;  // ms since epoch

  bool operator==(const SetTransaction&) const = default;
};

struct DomainMetadata {
  std::string domain;
  std::string configuration;  // a string holding JSON, as in the log
  bool removed = false;

  bool operator==(const DomainMetadata&) const = default;
};

// commitInfo is free-form: the whole object is kept as JSON text, with the fields Sluice uses
// pulled out.
struct CommitInfo {
  std::string raw_json;  // the commitInfo object (without the {"commitInfo": ...} wrapper)
  std::optional<int64_t> timestamp;
  std::optional<std::string> operation;
  std::optional<int64_t> in_commit_timestamp;

  bool operator==(const CommitInfo&) const = default;
};

using Action = std::variant<Protocol, Metadata, AddFile, RemoveFile, AddCdcFile, SetTransaction,
                            DomainMetadata, CommitInfo>;

// Parses one JSON object holding actions. Normally it has one key ("add", ...); every known key
// with a non-null value becomes an action (checkpoint rows rendered as JSON have one non-null
// column per row). Unknown keys are ignored. A checkpoint add whose `stats` is absent but has
// `stats_parsed` gets stats = that object as JSON text. Corruption when the text is not a JSON
// object or a known action lacks a required field.
Result<std::vector<Action>> ParseActions(std::string_view json_object);

// Parses a JSON map of strings as partitionValues and tags are stored: an object (null values
// kept as nullopt, non-string values as their JSON text) or a [{"key":..,"value":..}] list.
// `field` names the map in errors. Corruption when the text is neither.
Result<std::map<std::string, std::optional<std::string>>> ParseStringMapJson(
    std::string_view json_text, std::string_view field);

// Parses a commit file (newline-delimited JSON). Empty lines are skipped. Errors are Corruption
// naming `file_name` and the 1-based line number.
Result<std::vector<Action>> ParseCommitFile(std::string_view contents, std::string_view file_name);

// One line of Delta JSON for `action`, e.g. {"add":{...}} (no trailing newline).
std::string SerializeAction(const Action& action);
// A commit file's contents: each action on its own line, each line ending in '\n'.
std::string SerializeCommit(const std::vector<Action>& actions);

// The action's key in the log: "add", "remove", "metaData", "protocol", "cdc", "txn",
// "domainMetadata", "commitInfo".
std::string_view ActionName(const Action& action);

}  // namespace sluice::delta
