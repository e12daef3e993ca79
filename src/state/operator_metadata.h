// Operator metadata and state schema files of a stateful operator (docs/formats/state.md), and
// the check that a restarted query still matches the state in its checkpoint.
//
//   state/<opId>/_metadata/metadata        operator metadata v1, Spark's exact JSON (§10):
//     v1
//     {"operatorInfo":{"operatorId":0,"operatorName":"stateStoreSave"},
//      "stateStoreInfo":[{"storeName":"default","numColsPrefixKey":0,"numPartitions":200}]}
//   state/<opId>/0/_metadata/schema        state schema, Sluice text format v1 (one per store;
//                                          a non-default store:
//                                          state/<opId>/0/<store>/_metadata/schema)
//     v1
//     {"operatorName":"...","storeName":"default","keySchema":{...},"valueSchema":{...}}
//
// Both files are written once (CreateIfAbsent) and checked on every later start. A mismatch is
// InvalidArgument naming the operator, the file and the difference in plain words.
//
// Thread safety: pure functions and values; the file system decides races (one creator wins,
// the others then check against the winner).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/status.h"
#include "fs/file_system.h"

namespace sluice::state {

struct StateStoreInfo {
  std::string store_name = "default";
  int32_t num_cols_prefix_key = 0;
  int32_t num_partitions = 0;
};

struct OperatorMetadata {
  int64_t operator_id = 0;
  std::string operator_name;  // e.g. "stateStoreSave", "dedupeWithinWatermark", "symmetricHashJoin"
  std::vector<StateStoreInfo> stores;
};

// One column of a state key or value. `type` is the engine's SQL type name ("BIGINT",
// "STRUCT(start TIMESTAMP, \"end\" TIMESTAMP)"); the state layer compares it as an opaque string.
struct StateField {
  std::string name;
  std::string type;
  bool nullable = true;
};

struct StateSchema {
  std::vector<StateField> key;
  std::vector<StateField> value;
};

std::string OperatorMetadataPath(std::string_view checkpoint_root, int64_t operator_id);
std::string StateSchemaPath(std::string_view checkpoint_root, int64_t operator_id,
                            std::string_view store_name = "default");

std::string EncodeOperatorMetadata(const OperatorMetadata& m);
// Corruption naming `path` for anything that is not a v1 metadata file.
Result<OperatorMetadata> DecodeOperatorMetadata(std::string_view bytes, std::string_view path);

std::string EncodeStateSchema(std::string_view operator_name, std::string_view store_name,
                              const StateSchema& schema);
Result<StateSchema> DecodeStateSchema(std::string_view bytes, std::string_view path);

// Writes the operator's metadata when absent; otherwise reads it and requires the same operator
// name, the same stores and the same number of partitions (frozen at the first run). Returns the
// metadata now in the checkpoint.
Result<OperatorMetadata> WriteOrCheckOperatorMetadata(fs::FileSystem& fs,
                                                      std::string_view checkpoint_root,
                                                      const OperatorMetadata& expected);

// Compatibility of a stored schema with the query's: the same number of key (value) fields, and
// field by field the same name and type; a field stored as NOT NULL may become nullable, not the
// reverse. OK or InvalidArgument "... (STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE)" /
// "(STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE)" naming the operator and each difference.
Status CheckStateSchemaCompatible(std::string_view operator_description, const StateSchema& stored,
                                  const StateSchema& query);

// Writes the schema of operator `operator_id`'s store when absent; otherwise checks it with
// CheckStateSchemaCompatible. The stored file is not rewritten.
Status WriteOrCheckStateSchema(fs::FileSystem& fs, std::string_view checkpoint_root,
                               int64_t operator_id, std::string_view operator_name,
                               std::string_view store_name, const StateSchema& schema);

}  // namespace sluice::state
