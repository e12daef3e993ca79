// The pipeline-only statements of docs/pipelines.md, parsed by sluice run's pipeline graph
// (pipeline_graph.h): CREATE [OR REFRESH] MATERIALIZED VIEW. A materialized view is recomputed
// whole by each refresh, as one Delta commit that replaces its table's rows
// (MaterializedViewRefreshSql).
//
//   CREATE [OR REFRESH] MATERIALIZED VIEW name
//     [COMMENT 'text'] [PARTITIONED BY (col, ...)] [TBLPROPERTIES (...)]
//     AS <query>
//
// A column list (with or without expectations) is refused as not supported yet.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace sluice::sql {

struct CreateMaterializedViewStatement {
  bool or_refresh = false;
  std::string name;  // as written
  std::vector<std::string> partitioned_by;
  std::string properties_text;  // "(...)" of TBLPROPERTIES as written; empty when none
  std::string query;            // the text after AS
};

// nullopt: not CREATE [OR REFRESH] MATERIALIZED VIEW. InvalidArgument for a syntax error (line
// and column inside `sql`), NotSupported for a column list.
Result<std::optional<CreateMaterializedViewStatement>> ParseMaterializedView(std::string_view sql);

// The statement one refresh runs: CREATE OR REPLACE TABLE name [PARTITIONED BY (...)]
// [TBLPROPERTIES (...)] AS <query>.
std::string MaterializedViewRefreshSql(const CreateMaterializedViewStatement& mv);

}  // namespace sluice::sql
