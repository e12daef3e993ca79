// Deletion vectors (PROTOCOL.md "Deletion Vectors", "Deletion Vector Format"): from an add's
// DeletionVectorDescriptor to the set of row indexes of its data file that are deleted.
//
// Storage types: 'i' inline (pathOrInlineDv is Z85 of the bitmap bytes, sizeInBytes of them
// used), 'u' a file in the table directory named by a Z85-encoded UUID after an optional random
// prefix directory (<root>/<prefix>/deletion_vector_<uuid>.bin), 'p' an absolute path (as an
// add's path: a URI, percent-encoded). A DV file is version byte 1, then per DV at `offset`
// (0 when absent): dataSize (u32 big endian), the bitmap bytes, CRC-32 of those bytes (u32 big
// endian). The bitmap bytes are the magic number 1681511377 (u32 little endian) followed by a
// 64-bit portable roaring bitmap (roaring.h), what Delta writes; Delta's older "native" format
// (magic 1681511376: a u32 count, then per bitmap a u32 size and a 32-bit roaring bitmap keyed
// by its index) is read too, in either byte order of that framing.
//
// Every check fails with Corruption naming the data file, the DV file and the offset: an unknown
// storage type, a missing file (NotFound), a wrong version, size, checksum or magic, a bitmap
// that does not decode, a cardinality that differs from the descriptor's. Never a partial set.
//
// Thread safety: DeletionVectorLoader is used by one thread at a time; the rest is pure.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "delta/actions.h"
#include "delta/roaring.h"
#include "fs/file_system.h"

namespace sluice::delta {

// Z85 (ZeroMQ's base85) decoding; the length must be a multiple of 5. Corruption otherwise, or
// for a character outside the alphabet or a group above 2^32 - 1.
Result<std::string> Z85Decode(std::string_view text);

// CRC-32 (IEEE 802.3, as zlib and java.util.zip.CRC32).
uint32_t Crc32(std::string_view data);

// The absolute path of the DV file of a 'u' or 'p' descriptor under `table_root`;
// InvalidArgument for 'i' (no file) and Corruption for any other storage type or a malformed
// 'u' value.
Result<std::string> DeletionVectorFilePath(const std::string& table_root, const DeletionVector& dv);

// Decodes serialized bitmap bytes (magic number + 64-bit portable roaring bitmap).
Result<RowIndexSet> DecodeDeletionVectorBitmap(std::string_view bytes);

// Loads DVs of one table, reading each DV file once (several DVs may share a file).
class DeletionVectorLoader {
 public:
  DeletionVectorLoader(fs::FileSystem* fs, std::string table_root)
      : fs_(fs), table_root_(std::move(table_root)) {}

  // The deleted row indexes of `data_file` (named in errors) per its descriptor `dv`.
  Result<std::shared_ptr<const RowIndexSet>> Load(const DeletionVector& dv,
                                                  const std::string& data_file);

 private:
  Result<RowIndexSet> LoadUncached(const DeletionVector& dv);

  fs::FileSystem* fs_;
  std::string table_root_;
  std::map<std::string, std::string> files_;                          // DV file path -> its bytes
  std::map<std::string, std::shared_ptr<const RowIndexSet>> loaded_;  // by UniqueId()
};

}  // namespace sluice::delta
