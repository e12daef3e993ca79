// Scan filters and data skipping: a conjunction of simple predicates (column op literal,
// IS [NOT] NULL) that prunes files by partition values and by add.stats (minValues, maxValues,
// nullCount, numRecords), and that the scan also applies to the rows.
//
// Pruning is conservative: a file is skipped only when the predicate is provably false for
// every row in it. Missing stats, columns without stats, unparsable values and types without
// an order keep the file. String min/max may be truncated prefixes; they stay valid bounds.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "delta/actions.h"
#include "engine/types.h"

namespace sluice::delta {

enum class CompareOp { kEq, kNe, kLt, kLe, kGt, kGe, kIsNull, kIsNotNull };

struct ColumnPredicate {
  std::string column;  // top-level column name (case-insensitive match)
  CompareOp op = CompareOp::kEq;
  std::optional<std::string>
      literal;  // text of the value, e.g. "42", "abc", "2024-01-01"; unused for IS [NOT] NULL
};

// AND of all conjuncts; empty = all rows.
struct ScanFilter {
  std::vector<ColumnPredicate> conjuncts;
};

// SQL boolean expression for the filter ("TRUE" when empty), literals cast to the column type.
// InvalidArgument for unknown columns or a missing literal.
Result<std::string> FilterToSql(const ScanFilter& filter, const engine::Schema& schema);

// False when `file` cannot hold a row matching `filter`.
Result<bool> FileMayMatch(const AddFile& file, const ScanFilter& filter,
                          const engine::Schema& schema,
                          const std::vector<std::string>& partition_columns);

}  // namespace sluice::delta
