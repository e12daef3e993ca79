// The checkpoint's `metadata` file: {"id":"<query uuid>"} (Spark's StreamMetadata). Created on
// the first start of a query, read on every restart; the id survives restarts (the run id does
// not). Format: docs/formats/checkpoint.md.
//
// Thread safety: free functions; concurrent LoadOrCreateStreamMetadata calls on one checkpoint,
// from threads or processes, all return the same id (the first creator's).
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "fs/file_system.h"

namespace sluice::stream {

struct StreamMetadata {
  std::string id;  // the query id: a canonical UUID

  bool operator==(const StreamMetadata&) const = default;
};

// {"id":"<id>"}: one JSON object, no version line, no trailing newline.
std::string SerializeStreamMetadata(const StreamMetadata& metadata);

// Parses the file's bytes. Surrounding whitespace and unknown fields are accepted (Spark reads
// with json4s); a missing or non-string "id", or an id that is not a canonical UUID, is
// Corruption. The message does not name a file: callers add it.
Result<StreamMetadata> ParseStreamMetadata(std::string_view bytes);

// Reads <checkpoint_root>/metadata. NotFound when absent; Corruption naming the file when its
// bytes do not parse (a torn or foreign file).
Result<StreamMetadata> ReadStreamMetadata(fs::FileSystem& fs, const std::string& checkpoint_root);

// Reads <checkpoint_root>/metadata, or creates it with a fresh UUID v4 when absent
// (create-if-absent: when another starter creates it first, that starter's id is returned).
// `created`, when not null, is set to whether this call wrote the file. Corruption naming the
// file when it is absent but the checkpoint holds offsets/<N> or commits/<N> (a damaged
// checkpoint whose query id is lost: a new id would write the uncommitted batch again).
Result<StreamMetadata> LoadOrCreateStreamMetadata(fs::FileSystem& fs,
                                                  const std::string& checkpoint_root,
                                                  const fs::WriteOptions& options = {},
                                                  bool* created = nullptr);

}  // namespace sluice::stream
