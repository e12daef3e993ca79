// df.write over Spark Connect (WriteOperation): save(path), saveAsTable(name) and
// insertInto(name) of a batch DataFrame into Delta tables (docs/pyspark.md, "Batch writes").
//
//   format      "delta" (Spark's default source, parquet, is refused for a path; saveAsTable
//               and insertInto without a format write Delta, as Databricks does)
//   mode        append, overwrite, error/errorifexists (Spark's default); ignore is refused
//   options     txnAppId + txnVersion (both or neither: the write is skipped when the table
//               already records that appId at a version >= txnVersion, Delta's idempotent
//               writes, for exactly-once from foreachBatch), mergeSchema, delta.* table
//               properties of a table the write creates; any other option is refused by name
//   conf_txn    the session's txnAppId/txnVersion confs (ConnectSession::IdempotentTxn), used
//               as Delta does when the write has no txn options of its own (insertInto too)
//   partitionBy the partition columns of a new table (of an existing one: must be its own)
// bucketBy, sortBy and clusterBy are refused. insertInto runs SQL's INSERT INTO (columns by
// position) and takes no options.
//
// The rows are computed by the session's sql::Session (the plan's query), then written by the
// Delta writer (delta/table_writer.h) with `engine`.
//
// Thread safety: called under the ConnectSession's mutex, like everything using its sql::Session.
#pragma once

#include <optional>
#include <string>

#include "common/result.h"
#include "connect/plan_translator.h"
#include "delta/actions.h"

namespace spark::connect {
class WriteOperation;
}

namespace sluice::engine {
class Engine;
}
namespace sluice::sql {
class Session;
}

namespace sluice::connect {

Status RunWriteOperation(const spark::connect::WriteOperation& write, PlanTranslator& translator,
                         sql::Session& session, engine::Engine& engine,
                         const std::optional<delta::SetTransaction>& conf_txn = std::nullopt);

}  // namespace sluice::connect
