// The syntax trees of the streaming statements of docs/sql-reference.md ("Streaming tables and
// flows", "Watching streams"): CREATE [OR REFRESH] STREAMING TABLE, REFRESH STREAMING TABLE, CREATE
// FLOW
// ... AS INSERT INTO | AS AUTO CDC INTO, SHOW STREAMING TABLES. Queries are kept as the original
// SQL text; the plan layer (plan/stream_query_parser.h, plan/planner.h) analyses them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "sinks/sink.h"
#include "sql/auto_cdc_spec.h"
#include "sql/pipeline_expectations.h"
#include "sql/table_statements.h"
#include "stream/trigger.h"

namespace sluice::sql {

struct CreateStreamingTableStatement {
  bool or_refresh = false;
  std::string name;                       // as written (a warehouse table name)
  std::vector<ColumnDefinition> columns;  // optional column definitions
  std::vector<std::string> partitioned_by;
  Properties properties;  // TBLPROPERTIES
  sinks::OutputMode output_mode = sinks::OutputMode::kAppend;
  // TRIGGER ...; nullopt when not written (REFRESH: AvailableNow; sluice run: Default).
  std::optional<stream::Trigger> trigger;
  std::optional<int64_t> schedule_every_ms;  // SCHEDULE EVERY n unit
  // AS <query>; nullopt for a table only flows write to (CREATE STREAMING TABLE t (cols)).
  std::optional<std::string> query;
  // CONSTRAINT name EXPECT (cond) [ON VIOLATION ...] of the column list (docs/pipelines.md).
  std::vector<Expectation> expectations;
};

struct RefreshStreamingTableStatement {
  std::string name;
};

// CREATE FLOW name AS INSERT INTO target [BY NAME] <query>: an append flow.
// CREATE FLOW name AS AUTO CDC INTO target FROM STREAM src ...: an AUTO CDC flow; `query` is then
// `SELECT * FROM STREAM src` and `auto_cdc` holds the rest.
struct CreateFlowStatement {
  std::string name;
  std::string target;
  std::string query;
  std::optional<AutoCdcSpec> auto_cdc;
};

struct ShowStreamingTablesStatement {};

using StreamingStatement =
    std::variant<CreateStreamingTableStatement, RefreshStreamingTableStatement, CreateFlowStatement,
                 ShowStreamingTablesStatement>;

}  // namespace sluice::sql
