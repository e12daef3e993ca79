// ColumnValues: rows of one column of a Batch as typed C++ values, read from the engine's own
// representation of each value (no text in between), for code that hands results to another
// format (Spark Connect's Arrow batches, connect/batch_to_arrow.h).
//
// Which vector holds a column's values, by type:
//   BOOLEAN                        ints (0 / 1)
//   TINYINT, SMALLINT, INTEGER,    ints
//   BIGINT
//   DATE                           ints: days since 1970-01-01
//   TIMESTAMP, TIMESTAMPTZ         ints: microseconds since 1970-01-01 00:00:00 (UTC for
//                                  TIMESTAMPTZ; the zone-less value read as UTC for TIMESTAMP)
//   FLOAT, DOUBLE                  doubles
//   HUGEINT, DECIMAL(p,s)          int128s: the value (HUGEINT), the unscaled value (DECIMAL,
//                                  whatever its width inside the engine)
//   VARCHAR, BLOB                  bytes
//   the NULL type                  none (every row invalid)
// Every vector of the column's kind has one entry per row read, NULL rows included (their entry
// is 0 or empty); `valid` says which rows are NULL. Any other type is NotSupported naming the
// column and the type. A DATE or TIMESTAMP of +/-infinity is InvalidArgument naming the column
// and row (no finite value stands for it).
//
// Cost: one scan of the batch's rows (chunks before `offset` are scanned and skipped).
// Thread safety: Batches are immutable; the function is reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"

namespace sluice::engine {

struct ColumnValues {
  std::vector<bool> valid;
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  std::vector<__int128> int128s;
  std::vector<std::string> bytes;
};

// Rows [offset, offset + length) of column `column` (clamped to the rows present).
// InvalidArgument when `column` is out of range.
Result<ColumnValues> ReadColumnValues(const Batch& batch, size_t column, int64_t offset,
                                      int64_t length);

}  // namespace sluice::engine
