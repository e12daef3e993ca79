// The pipeline-only statements of docs/pipelines.md, parsed by sluice run's pipeline graph
// (pipeline_graph.h): CREATE [OR REFRESH] MATERIALIZED VIEW. A materialized view is recomputed
// whole by each refresh, as one Delta commit that replaces its table's rows
// (MaterializedViewRefreshSql).
//
//   CREATE [OR REFRESH] MATERIALIZED VIEW name
//     [(CONSTRAINT name EXPECT (cond) [ON VIOLATION DROP ROW | FAIL UPDATE], ...)]
//     [COMMENT 'text'] [PARTITIONED BY (col, ...)] [TBLPROPERTIES (...)]
//     AS <query>
//
// Expectations (pipeline_expectations.h) are the only entries of the column list accepted;
// column definitions are refused as not supported yet.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "sql/pipeline_expectations.h"

namespace sluice::sql {

struct CreateMaterializedViewStatement {
  bool or_refresh = false;
  std::string name;  // as written
  std::vector<std::string> partitioned_by;
  std::string properties_text;  // "(...)" of TBLPROPERTIES as written; empty when none
  std::string query;            // the text after AS
  std::vector<Expectation> expectations;
};

// nullopt: not CREATE [OR REFRESH] MATERIALIZED VIEW. InvalidArgument for a syntax error (line
// and column inside `sql`), NotSupported for column definitions.
Result<std::optional<CreateMaterializedViewStatement>> ParseMaterializedView(std::string_view sql);

// The statement one refresh runs: CREATE OR REPLACE TABLE name [PARTITIONED BY (...)]
// [TBLPROPERTIES (...)] AS <query> (without the rows failing a DROP ROW expectation).
std::string MaterializedViewRefreshSql(const CreateMaterializedViewStatement& mv);

}  // namespace sluice::sql
