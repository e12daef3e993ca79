// DELETE FROM t [WHERE condition] by copy-on-write (dml_util.h).
//
// - No condition: every live file is removed (dataChange=true), nothing is rewritten.
// - A condition over partition columns only: files whose partition satisfies it are removed
//   whole, nothing is rewritten.
// - Otherwise: candidate files (partition + stats pruning of the condition's simple conjuncts),
//   one query finding the files with rows where the condition is TRUE, and those files only are
//   rewritten without those rows (rows where it is FALSE or NULL stay).
// With the change data feed enabled, rewritten deletes also write cdc files with the deleted
// rows as `delete`; whole-file removes need none (the reader derives deletes from removes).
// commitInfo: operation "DELETE", operationParameters {predicate}, operationMetrics
// numRemovedFiles, numAddedFiles, numDeletedRows, numCopiedRows, numAddedChangeFiles,
// numRemovedBytes, numAddedBytes. Nothing to delete: no commit.
// Conflicts: the candidate files are recorded as read (a concurrent remove of one fails this
// commit with Conflict); an unconditional DELETE reads the whole table.
#pragma once

#include <optional>
#include <string>

#include "common/result.h"
#include "delta/dml_util.h"

namespace sluice::delta {

Result<DmlResult> DeleteRows(const DmlTable& table, const std::optional<std::string>& condition,
                             const DmlOptions& options = {});

}  // namespace sluice::delta
