// Rows: the result of a batch DataFrame (DataFrame::Collect), an immutable table of values.
//
//   SLUICE_ASSIGN_OR_RETURN(sluice::Rows rows, df.Collect());
//   for (int64_t r = 0; r < rows.num_rows(); ++r) {
//     std::optional<std::string> name = rows.GetString(r, 1);  // nullopt for NULL
//   }
//
// Values are held in the engine's columnar form; the accessors convert one cell at a time and
// are meant for results of modest size (tests, small lookups), not for hot loops.
//
// Ownership: copying a Rows is cheap (the values are shared, never copied).
// Thread safety: a Rows is immutable; const methods may be called from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/result.h"

namespace sluice {

namespace api {
struct RowsAccess;  // internal: converts to and from the engine's batches
}

// One column of a result: its name and its type as SQL text ("BIGINT", "VARCHAR",
// "TIMESTAMP WITH TIME ZONE", "DECIMAL(10,2)", ...).
struct Column {
  std::string name;
  std::string type;
  bool operator==(const Column& other) const = default;
};

class Rows {
 public:
  // No columns, no rows.
  Rows();

  const std::vector<Column>& columns() const;
  int64_t num_rows() const;
  size_t num_columns() const;
  // The index of the column named `name` (exact match), or nullopt.
  std::optional<size_t> ColumnIndex(std::string_view name) const;

  // Cells. `row` < num_rows() and `col` < num_columns() are the caller's duty: out of range
  // is a programmer error (checked in debug builds).
  bool IsNull(int64_t row, size_t col) const;
  // The value as SQL's CAST(value AS VARCHAR) shows it (timestamps with time zone in UTC,
  // "2024-01-02 03:04:05+00"); nullopt for NULL.
  std::optional<std::string> GetString(int64_t row, size_t col) const;
  // The value cast to BIGINT / DOUBLE / BOOLEAN; nullopt for NULL; InvalidArgument when the cast
  // fails.
  Result<std::optional<int64_t>> GetInt64(int64_t row, size_t col) const;
  Result<std::optional<double>> GetDouble(int64_t row, size_t col) const;
  Result<std::optional<bool>> GetBool(int64_t row, size_t col) const;

  // Every row as "v1,v2,NULL" (cells as GetString, "NULL" for NULL), in order.
  std::vector<std::string> RowStrings() const;
  // Spark's Dataset.show() table of the first `num_rows` rows; with `truncate`, cells longer than
  // 20 characters are cut.
  std::string ToString(int64_t num_rows = 20, bool truncate = true) const;

 private:
  friend struct api::RowsAccess;
  struct Impl;
  explicit Rows(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace sluice
