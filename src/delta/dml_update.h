// UPDATE t SET col = expr, ... [WHERE condition] by copy-on-write (dml_util.h).
//
// Candidate files come from partition + stats pruning of the condition's simple conjuncts; one
// query finds the files holding rows where the condition is TRUE (every non-empty file when
// there is no condition), and only those are rewritten: rows where it is TRUE get the new
// values (each expression cast to its column's type, evaluated on the old row), the others are
// copied. Updating a partition column moves rows to their new partition.
// With the change data feed enabled the commit also writes cdc files with the old rows as
// `update_preimage` and the new rows as `update_postimage`.
// commitInfo: operation "UPDATE", operationParameters {predicate}, operationMetrics
// numRemovedFiles, numAddedFiles, numUpdatedRows, numCopiedRows, numAddedChangeFiles,
// numRemovedBytes, numAddedBytes. No matching row: no commit.
// Errors: InvalidArgument for an unknown or repeated column, or an empty assignment list;
// DuckDB's message for invalid expressions.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "delta/dml_util.h"

namespace sluice::delta {

// (target column, SQL expression over the target row).
using Assignments = std::vector<std::pair<std::string, std::string>>;

Result<DmlResult> UpdateRows(const DmlTable& table, const Assignments& assignments,
                             const std::optional<std::string>& condition,
                             const DmlOptions& options = {});

}  // namespace sluice::delta
