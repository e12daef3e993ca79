// Finding the Delta tables a query reads, so that the session can make each one a view before
// the engine runs the query (docs/sql-frontend.md).
//
//   SELECT ... FROM t                          t is read as a view named t (latest snapshot)
//   ... FROM t VERSION AS OF 3 [AS x]          -> "t@v3" AS t            (time travel)
//   ... FROM t TIMESTAMP AS OF '2026-01-01'    -> "t@2026-01-01" AS t
//   ... FROM delta.`/data/silver`              -> "delta:/data/silver" AS silver
//   ... FROM table_changes('t', 0 [, 5])       -> "changes:t:0:5"        (change data feed)
//   ... FROM (DESCRIBE HISTORY t)              -> "history:t"            (also DESCRIBE DETAIL)
//
// A plain name is a table reference when a Delta table of that name exists (the caller's
// predicate) and the name is not a function call or a qualified name's second part. CTEs and
// aliases that shadow a table name still shadow it: the view only exists beside them.
//
// The table an UPDATE, DELETE FROM or MERGE INTO writes is not a reference (it is kept as
// written and gets no view: the statement reads only its candidate files, delta/dml_util.h);
// the same table named again inside the statement (a subquery) is one.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "sql/table_statements.h"

namespace sluice::sql {

struct DeltaReference {
  enum class Kind { kLatest, kVersion, kTimestamp, kChanges, kHistory, kDetail, kDescribe };
  Kind kind = Kind::kLatest;
  TableName table;
  std::string view_name;                 // the relation name the rewritten query uses
  std::optional<int64_t> version;        // kVersion
  std::optional<std::string> timestamp;  // kTimestamp
  // kChanges: the start and optional end as written: a version number or a timestamp string.
  std::string changes_start;
  std::optional<std::string> changes_end;
  bool changes_by_timestamp = false;
};

struct RewrittenQuery {
  std::string sql;
  std::vector<DeltaReference> references;  // distinct by view_name
};

// `is_table(name)` says whether a plain name is a Delta table of the warehouse.
Result<RewrittenQuery> RewriteDeltaReferences(
    std::string_view sql, const std::function<bool(const std::string&)>& is_table);

}  // namespace sluice::sql
