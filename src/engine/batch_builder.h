// BatchBuilder: builds a Batch row by row from C++ values, for sources that produce rows in C++
// (the Nexmark generator, tests) without going through SQL.
//
// Usage: for each row, one Append* call per column in schema order, then EndRow(); Finish() at
// the end.
//   BatchBuilder b({{"id", DataType{TypeId::kBigInt}}, {"name", DataType{TypeId::kVarchar}}});
//   SLUICE_RETURN_NOT_OK(b.AppendInt64(1));
//   SLUICE_RETURN_NOT_OK(b.AppendString("x"));
//   SLUICE_RETURN_NOT_OK(b.EndRow());
//   SLUICE_ASSIGN_OR_RETURN(Batch batch, b.Finish());
//
// Which Append fits which column type (anything else is InvalidArgument naming the column and
// both types; the value is not appended and the row stays where it was):
//   AppendInt64           TINYINT..BIGINT, HUGEINT, and the unsigned integers (kOther UTINYINT..
//                         UBIGINT); InvalidArgument when the value does not fit the column type
//   AppendDouble          FLOAT (rounded to float), DOUBLE
//   AppendString          VARCHAR (must be valid UTF-8), BLOB (any bytes)
//   AppendBool            BOOLEAN
//   AppendTimestampMicros TIMESTAMP, TIMESTAMP WITH TIME ZONE (microseconds since the Unix epoch,
//                         UTC for the latter)
//   AppendNull            any column (NULL is the only value nested and other types can take)
//
// The rows live in memory of a process-wide in-memory DuckDB database (not of an Engine), so the
// Batch does not count against any Engine's memory_limit; it can be registered on any Connection.
// Cost: values go straight into DuckDB vectors, 2,048 rows at a time.
// Thread safety: a BatchBuilder is used by one thread at a time; distinct builders are
// independent.
// A moved-from builder may only be destroyed or assigned to.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "common/result.h"
#include "common/status.h"
#include "engine/engine.h"
#include "engine/types.h"

namespace sluice::engine {

// One column's values for BatchBuilder::AppendColumns (views: the caller keeps them alive
// during the call only). Build with the factory functions.
struct BulkColumn {
  enum class Kind : uint8_t { kInt64, kTimestamp, kString };
  Kind kind = Kind::kInt64;
  std::span<const int64_t> ints;              // kInt64, kTimestamp
  int64_t timestamp_scale = 1;                // kTimestamp: microseconds = value * scale
  std::span<const std::string_view> strings;  // kString
  bool known_valid_utf8 = false;              // kString: skip the UTF-8 check (see Strings)

  // For a BIGINT column.
  static BulkColumn Int64s(std::span<const int64_t> v) { return {Kind::kInt64, v, 1, {}, false}; }
  // For a TIMESTAMP / TIMESTAMPTZ column: value * scale microseconds since the epoch (scale 1000
  // for milliseconds).
  static BulkColumn Timestamps(std::span<const int64_t> v, int64_t scale) {
    return {Kind::kTimestamp, v, scale, {}, false};
  }
  // For a VARCHAR (valid UTF-8 required) or BLOB column. known_valid_utf8 = true skips the check
  // (about 10 % of a bulk append of short strings): only for producers that cannot produce
  // anything else (e.g. ASCII-only generators); invalid UTF-8 in a VARCHAR is then undefined.
  static BulkColumn Strings(std::span<const std::string_view> v, bool known_valid_utf8 = false) {
    return {Kind::kString, {}, 1, v, known_valid_utf8};
  }
};

class BatchBuilder {
 public:
  // A builder of batches with `schema` (names and types). Types are checked lazily: a schema
  // whose kOther type DuckDB does not know makes every call return InvalidArgument.
  explicit BatchBuilder(Schema schema);
  ~BatchBuilder();
  BatchBuilder(const BatchBuilder&) = delete;
  BatchBuilder& operator=(const BatchBuilder&) = delete;
  BatchBuilder(BatchBuilder&&) noexcept;
  BatchBuilder& operator=(BatchBuilder&&) noexcept;

  // Sets the next column of the current row. InvalidArgument when the row already has a value
  // for every column, or on a type mismatch (see the table above).
  [[nodiscard]] Status AppendInt64(int64_t value);
  [[nodiscard]] Status AppendDouble(double value);
  [[nodiscard]] Status AppendString(std::string_view value);
  [[nodiscard]] Status AppendBool(bool value);
  [[nodiscard]] Status AppendTimestampMicros(int64_t micros_since_epoch);
  [[nodiscard]] Status AppendNull();

  // Ends the current row. InvalidArgument naming the first missing column when the row does not
  // have a value for every column (the partial row is then discarded).
  [[nodiscard]] Status EndRow();

  // Column-at-a-time bulk append, for columnar producers: appends `num_rows` rows whose column c
  // takes its values from columns[c] (one BulkColumn per schema column, in order, each with
  // num_rows values; no NULLs). Kinds fit: kInt64 -> BIGINT, kTimestamp -> TIMESTAMP /
  // TIMESTAMPTZ, kString -> VARCHAR / BLOB. Mixes freely with row-at-a-time rows before and after
  // it (rows keep their order). Cost: one copy of each value into the batch (strings included),
  // 2,048 rows at a time. InvalidArgument, appending nothing, when a row is in progress, or on a
  // wrong column count, a length other than num_rows, or a kind that does not fit its column.
  // InvalidArgument on invalid UTF-8 in a VARCHAR column or a timestamp that overflows int64
  // microseconds; then the builder is EMPTIED (every row since construction or the last Finish is
  // discarded), because earlier rows of the call may already be in the batch.
  [[nodiscard]] Status AppendColumns(int64_t num_rows, std::span<const BulkColumn> columns);

  // Rows ended so far (since construction or the last Finish).
  int64_t num_rows() const;
  const Schema& schema() const;

  // The batch of all ended rows, with the builder's schema (a batch with the columns and no rows
  // when none were added; Batch() when the schema has no columns). InvalidArgument when a row
  // is in progress. The builder is then empty and may build the next batch.
  Result<Batch> Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sluice::engine
