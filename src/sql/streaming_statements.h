// The syntax trees of the streaming statements of docs/sql.md ("Streaming tables and flows",
// "Watching streams"): CREATE [OR REFRESH] STREAMING TABLE, REFRESH STREAMING TABLE, CREATE FLOW
// ... AS INSERT INTO, SHOW STREAMING TABLES. Queries are kept as the original SQL text; the plan
// layer (plan/stream_query_parser.h, plan/planner.h) analyses them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "sinks/sink.h"
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
};

struct RefreshStreamingTableStatement {
  std::string name;
};

// CREATE FLOW name AS INSERT INTO target [BY NAME] <query>: an append flow.
struct CreateFlowStatement {
  std::string name;
  std::string target;
  std::string query;
};

struct ShowStreamingTablesStatement {};

using StreamingStatement =
    std::variant<CreateStreamingTableStatement, RefreshStreamingTableStatement, CreateFlowStatement,
                 ShowStreamingTablesStatement>;

}  // namespace sluice::sql
