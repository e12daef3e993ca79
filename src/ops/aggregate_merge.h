// AggregateMerger: merges a streaming aggregation's partial aggregates in C++, on their row-codec
// bytes (engine/row_codec.h, docs/formats/row-codec.md), instead of decoding the state rows into
// a DuckDB batch and running the merge SQL (ops/streaming_aggregate.h, step 3).
//
// Supported partials (anything else: Make gives nullopt and the caller keeps the SQL merge):
//   sum over BIGINT or DOUBLE (count(*), count(x), sum(x) and avg's two partials merge by sum);
//   min / max over BOOLEAN, TINYINT, SMALLINT, INTEGER, BIGINT, FLOAT, DOUBLE, DATE, TIME,
//   TIMESTAMP, TIMESTAMPTZ (fixed-width payloads whose bytes sort like the values).
// Results are those of the merge SQL `CAST(fn(p) AS type)` over the two rows: NULLs are ignored
// and two NULLs give NULL; a BIGINT sum outside BIGINT's range fails (InvalidArgument, as the
// SQL's cast of the HUGEINT sum does); a DOUBLE sum is the IEEE sum (inf, NaN as DuckDB); min /
// max order NaN above every other value (DuckDB's order; the codec stores one canonical NaN).
// Output bytes are the row codec's (DOUBLE: NaN canonical, -0.0 as +0.0).
// Thread safety: const methods only; one merger may be used by many threads.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/types.h"

namespace sluice::ops {

struct PartialMergeSpec {
  std::string merge_fn;                         // "sum", "min", "max" (others are not supported)
  engine::TypeId type = engine::TypeId::kNull;  // the partial column's type
  std::string description;                      // the aggregate call, for error messages ("sum(v)")
};

class AggregateMerger {
 public:
  // A merger for these partial columns (in row order), or nullopt if one is not supported.
  static std::optional<AggregateMerger> Make(const std::vector<PartialMergeSpec>& partials);

  // Appends to *out the merged values of the partial columns: `state` and `batch` each hold
  // exactly the encoded values (tag + payload per column, no version byte) of the partials.
  // Corruption when either does not parse as exactly those values; InvalidArgument when a
  // BIGINT sum overflows.
  Status Merge(std::string_view state, std::string_view batch, std::string* out) const;

 private:
  enum class Op { kSumInt64, kSumDouble, kMin, kMax };
  struct Column {
    Op op = Op::kMin;
    size_t width = 0;  // payload bytes
    std::string description;
  };
  std::vector<Column> columns_;
};

}  // namespace sluice::ops
