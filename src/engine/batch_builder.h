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
#include <string_view>

#include "common/result.h"
#include "common/status.h"
#include "engine/engine.h"
#include "engine/types.h"

namespace sluice::engine {

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
