// Writing deletion vectors (PROTOCOL.md "Deletion Vector Format"): the inverse of
// deletion_vector.h's reader, producing the bytes Delta writes.
//
// A DV's bitmap bytes are the magic number 1681511377 (u32 little endian) followed by the 64-bit
// portable RoaringBitmap serialization of its row indexes (roaring.h): one bucket per distinct
// upper 32 bits, each a 32-bit bitmap whose containers are chosen as RoaringBitmap's runOptimize
// does (an array up to 4096 values, else a bitmap; a run container when that is smaller), so a
// small DV is byte for byte what Spark writes. A DV file is the format version byte 1, then per
// DV its size (u32 big endian), the bitmap bytes and their CRC-32 (u32 big endian); a DV's
// offset is the position of its size field.
//
// DeletionVectorFileWriter collects the DVs of one operation into one file
// `<table>/deletion_vector_<uuid>.bin` (a fresh UUID, no random prefix, as Spark writes by
// default) and gives each a descriptor: storageType "u", pathOrInlineDv the Z85 text of the
// UUID's 16 bytes, offset, sizeInBytes and cardinality. The file is created put-if-absent under
// its final name before the commit that names it, so a crash leaves at most an unreferenced file
// that VACUUM removes.
//
// Thread safety: pure functions; a DeletionVectorFileWriter is used by one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "delta/actions.h"
#include "delta/roaring.h"
#include "fs/file_system.h"

namespace sluice::delta {

// Z85 (ZeroMQ's base85) encoding; `bytes.size()` must be a multiple of 4 (InvalidArgument).
Result<std::string> Z85Encode(std::string_view bytes);

// The 64-bit portable serialization of `rows` (no magic number). Row indexes must be below
// 2^63 (Delta's rule); InvalidArgument otherwise.
Result<std::string> EncodeRoaring64(const RowIndexSet& rows);

// Magic number + EncodeRoaring64: the bytes a DV descriptor's sizeInBytes counts.
Result<std::string> EncodeDeletionVectorBitmap(const RowIndexSet& rows);

class DeletionVectorFileWriter {
 public:
  DeletionVectorFileWriter(fs::FileSystem* fs, std::string table_root);

  // Appends one DV to the file's bytes and returns its descriptor. `rows` must not be empty.
  Result<DeletionVector> Add(const RowIndexSet& rows);

  bool empty() const { return count_ == 0; }
  int count() const { return count_; }
  // The storage path of the file.
  const std::string& path() const { return path_; }

  // Creates the file (put-if-absent; fsynced with its directory when `sync`). Call once, after
  // the last Add and before the commit.
  Status Write(bool sync);

 private:
  fs::FileSystem* fs_;
  std::string path_;
  std::string z85_uuid_;
  std::string bytes_;
  int count_ = 0;
};

}  // namespace sluice::delta
