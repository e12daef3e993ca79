// A decoder of RoaringBitmap's portable serialization (the RoaringFormatSpec), as Delta's
// deletion vectors store row indexes: 32-bit bitmaps (array, bitmap and run containers) and the
// 64-bit "treemap" extension (a count of buckets, each a 32-bit key and a 32-bit bitmap).
//
// Decoding is strict: every length is checked against the bytes present, containers and values
// must be in ascending order, a header's cardinality must match its container, and nothing may
// follow the last bucket. Any violation is Corruption naming the byte offset (from the start of
// the bytes given) and what was wrong; the decoder never returns a partial or different set.
//
// Thread safety: pure functions over plain values.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace sluice::delta {

// Half-open range [begin, end) of row indexes.
struct RowRange {
  uint64_t begin = 0;
  uint64_t end = 0;

  bool operator==(const RowRange&) const = default;
};

// A set of row indexes as sorted, disjoint, non-adjacent ranges.
struct RowIndexSet {
  std::vector<RowRange> ranges;

  // Number of indexes in the set.
  uint64_t Cardinality() const;
  bool Contains(uint64_t index) const;
  // Appends [begin, end); `begin` must be >= the end of the last range (merged when adjacent).
  void Append(uint64_t begin, uint64_t end);

  bool operator==(const RowIndexSet&) const = default;
};

// The indexes of `a` that are not in `b`.
RowIndexSet Difference(const RowIndexSet& a, const RowIndexSet& b);

// The indexes in `a` or in `b` (a file's old deletion vector and the rows a DML deletes now).
RowIndexSet Union(const RowIndexSet& a, const RowIndexSet& b);

// Decodes the 64-bit portable format ("numBuckets" u64, then per bucket a u32 key and a 32-bit
// bitmap; little endian). Keys must be ascending and have their top bit clear (Delta's rule).
Result<RowIndexSet> DecodeRoaring64(std::string_view bytes);

// Decodes one 32-bit bitmap starting at `bytes[0]`; its values are added to `out` with `high`
// as their upper 32 bits. `*consumed` receives the bitmap's length in bytes. `base_offset` is
// added to the offsets in error messages (the position of `bytes` in a larger buffer).
Status DecodeRoaring32(std::string_view bytes, uint64_t high, size_t base_offset, RowIndexSet* out,
                       size_t* consumed);

}  // namespace sluice::delta
