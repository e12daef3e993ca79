// Encoding and decoding of state checkpoint files, format v1 (docs/formats/state.md):
//
//   header   "SLCL" (changelog) | "SLSN" (snapshot), u8 format version = 1, u8 flags = 0,
//            u16 reserved = 0, i64 store version, u32 crc32c(previous 16 bytes)
//   records  'P' u32 keyLen u32 valueLen key value u32 crc32c   (put)
//            'D' u32 keyLen key u32 crc32c                      (delete; changelogs only)
//   end      'E' u64 numRecords i64 numKeysAfter u32 crc32c      (then end of file)
//
// Integers are little-endian; each crc32c covers the record from its kind byte up to the crc.
// Snapshots hold puts only, keys strictly increasing. A file is valid only when complete: a torn
// tail (no end record), a bad checksum or bytes after the end record make the whole file
// Corruption, and nothing of it is applied.
//
// Thread safety: StateFileWriter is a plain value (one thread at a time); the functions are pure.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/status.h"
#include "state/state_paths.h"

namespace sluice::state {

inline constexpr uint8_t kStateFileFormatVersion = 1;
inline constexpr size_t kStateFileHeaderSize = 20;
inline constexpr size_t kStateFileEndRecordSize = 1 + 8 + 8 + 4;

// Builds one file in memory, record by record.
class StateFileWriter {
 public:
  StateFileWriter(StateFileKind kind, int64_t version);

  void Put(std::string_view key, std::string_view value);
  // Changelogs only (a snapshot never holds deletes: SLUICE_DCHECK).
  void Delete(std::string_view key);

  // Appends the end record and returns the finished file; the writer is then empty (header
  // only) for the same kind and version. num_keys_after: keys in the state after this version,
  // -1 when unknown.
  std::string Finish(int64_t num_keys_after);

  int64_t num_records() const { return num_records_; }
  // Bytes so far (header + records), without the end record.
  size_t size_bytes() const { return buf_.size(); }
  // Drops all records (keeps kind and version).
  void Clear();

 private:
  void AppendHeader();

  StateFileKind kind_;
  int64_t version_;
  std::string buf_;
  int64_t num_records_ = 0;
};

struct StateRecord {
  bool is_delete = false;
  std::string_view key;
  std::string_view value;  // empty for deletes
};

struct StateFileInfo {
  StateFileKind kind = StateFileKind::kChangelog;
  int64_t version = 0;
  int64_t num_records = 0;
  int64_t num_keys_after = -1;
};

// Checks a whole file: magic of `kind`, format version, header checksum, stored version ==
// `version`, every record's checksum, snapshot key order, the end record and nothing after it.
// Errors name `path`: Corruption for damaged bytes (a torn tail included), NotSupported for a
// newer format version or unknown flags.
Result<StateFileInfo> ValidateStateFile(std::string_view bytes, std::string_view path,
                                        StateFileKind kind, int64_t version);

// Calls `fn` for each record of a file ValidateStateFile accepted, in file order; stops at the
// first non-OK Status of `fn` and returns it. The views point into `bytes`.
Status ForEachStateRecord(std::string_view bytes,
                          const std::function<Status(const StateRecord&)>& fn);

}  // namespace sluice::state
