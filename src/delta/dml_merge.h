// MERGE INTO target USING source ON condition WHEN ... by copy-on-write (dml_util.h), with
// Spark's semantics:
// - Clauses of each kind are evaluated in order; the first whose condition holds applies
//   (only the last clause of a kind may omit its condition, else InvalidArgument).
//   WHEN MATCHED: UPDATE SET ... | UPDATE SET * | DELETE.
//   WHEN NOT MATCHED [BY TARGET]: INSERT (cols) VALUES (...) | INSERT * (over source rows only;
//   unlisted columns are NULL).
//   WHEN NOT MATCHED BY SOURCE: UPDATE SET ... | DELETE (over target rows only).
// - A target row matched by several source rows for which a MATCHED clause applies fails the
//   whole MERGE ("Cannot perform Merge as multiple source rows matched and attempted to modify
//   the same target row ..."), unless the only MATCHED clause is an unconditional DELETE.
//
// How files are found: the source is materialized once. Candidate target files are pruned
// (partition values and stats) by the ON condition's simple `target.col op literal` conjuncts and
// by the [min, max] of the source values of each `target.col = source.col` conjunct (no pruning
// when there are NOT MATCHED BY SOURCE clauses, which may touch every row). One join of the
// candidates' rows with the source finds the files holding target rows that a clause modifies;
// only those are read fully and rewritten (copied rows + updated rows), inserted rows go to new
// files, and removes + adds (+ cdc files) are committed in one commit.
//
// With the change data feed enabled, cdc files hold update_preimage/update_postimage for
// updated rows, delete for deleted rows and insert for inserted rows.
// commitInfo: operation "MERGE", operationParameters {predicate, matchedPredicates,
// notMatchedPredicates, notMatchedBySourcePredicates}, operationMetrics numSourceRows,
// numTargetRowsInserted, numTargetRowsUpdated, numTargetRowsMatchedUpdated,
// numTargetRowsNotMatchedBySourceUpdated, numTargetRowsDeleted, numTargetRowsMatchedDeleted,
// numTargetRowsNotMatchedBySourceDeleted, numTargetRowsCopied, numOutputRows,
// numTargetFilesAdded, numTargetFilesRemoved, numTargetChangeFilesAdded, numTargetBytesAdded,
// numTargetBytesRemoved. No change: no commit.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "delta/dml_util.h"
#include "engine/engine.h"

namespace sluice::delta {

enum class MergeClauseKind { kMatched, kNotMatched, kNotMatchedBySource };
enum class MergeActionKind { kUpdate, kUpdateAll, kDelete, kInsert, kInsertAll };

struct MergeClause {
  MergeClauseKind kind = MergeClauseKind::kMatched;
  std::optional<std::string> condition;  // SQL; nullopt = unconditional
  MergeActionKind action = MergeActionKind::kUpdate;
  // kUpdate: (target column, expression); kInsert: (target column, value expression).
  std::vector<std::pair<std::string, std::string>> assignments;
};

struct MergeSpec {
  // The source: a batch, or SQL relation text (a table/view name or a SELECT) when
  // source_batch is empty.
  std::optional<engine::Batch> source_batch;
  std::string source_sql;
  std::string source_alias = "s";
  std::string target_alias = "t";
  std::string on;  // the ON condition, over both aliases
  std::vector<MergeClause> clauses;
};

// `options.target_alias` is ignored (spec.target_alias is used).
Result<DmlResult> MergeInto(const DmlTable& table, const MergeSpec& spec,
                            const DmlOptions& options = {});

// The start of the multiple-match error message.
inline constexpr char kMergeMultipleMatchMessage[] =
    "Cannot perform Merge as multiple source rows matched and attempted to modify the same target "
    "row";

}  // namespace sluice::delta
