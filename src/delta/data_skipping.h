// Scan filters and data skipping: a conjunction of simple predicates (column op literal,
// IS [NOT] NULL) that prunes files by partition values and by add.stats (minValues, maxValues,
// nullCount, numRecords), and that the scan also applies to the rows.
//
// Pruning is conservative: a file is skipped only when the predicate is provably false for
// every row in it. Missing stats, columns without stats, unparsable values and types without
// an order keep the file. String min/max may be truncated prefixes; they stay valid bounds.
// Numbers are compared as long doubles while the engine compares a literal rounded to the
// column's FLOAT or DOUBLE, or decimals exactly: a literal within rounding distance of a bound
// or partition value (a few units in the last place of the column's type, or of a long double
// for decimals and for literals that are not integers) decides nothing, so the file is kept.
//
// FilePruner checks the filter once (columns, literals) and then decides file after file from
// each file's parsed stats (stats_parsed.h): a snapshot's files keep theirs, so a scan or a DML
// statement over a snapshot parses no stats JSON that an earlier statement already parsed.
// FileMayMatch(file, ...) is the same decision for one file whose stats it parses itself.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "delta/actions.h"
#include "delta/stats_parsed.h"
#include "delta/values.h"
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

// A filter prepared for a table: each conjunct's column, its literal as a comparable of the
// column's type, and whether it is a partition column. A conjunct that does not check (unknown
// column, missing or unparsable literal) keeps its error, returned by MayMatch when it reaches
// that conjunct (as FileMayMatch would). `schema` must outlive the pruner.
class FilePruner {
 public:
  FilePruner(const ScanFilter& filter, const engine::Schema& schema,
             const std::vector<std::string>& partition_columns);

  // False when `file`, whose parsed stats are `stats`, cannot hold a matching row.
  Result<bool> MayMatch(const AddFile& file, const ParsedFileStats& stats) const;
  // Whether the filter has no conjunct (every file matches).
  bool empty() const { return conjuncts_.empty(); }

 private:
  struct Conjunct {
    CompareOp op = CompareOp::kEq;
    Status error;  // not OK: MayMatch returns it
    const engine::Field* field = nullptr;
    Comparable literal;
    bool no_literal_order = false;  // the literal's type has no order: the conjunct never prunes
    bool is_partition = false;
    // Numbers closer than this (relative, absolute) to a bound cannot be told apart from it;
    // rel_tol 0: an integer column and an integer literal, exact against an integer bound.
    long double rel_tol = 0;
    long double abs_tol = 0;
    std::string literal_text;  // trimmed; a bound of the same text is equal in any type
  };
  // `c`'s literal compared with a bound or value whose text is `text`: -1/0/1, or nullopt when
  // the kinds differ or the numbers are too close to tell apart.
  static std::optional<int> Compare(const Conjunct& c, const Comparable& value,
                                    std::string_view text);
  std::vector<Conjunct> conjuncts_;
};

}  // namespace sluice::delta
