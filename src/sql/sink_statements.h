// The syntax trees of the sink statements (docs/streaming-sql.md "Sinks"): CREATE [OR REPLACE]
// SINK name USING format OPTIONS (...) [TRIGGER ...], DROP SINK [IF EXISTS] name, REFRESH SINK
// name, SHOW SINKS. Flows into a sink are CREATE FLOW ... AS INSERT INTO <sink> (streaming_
// statements.h); the sink statements define where their rows go.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "sql/table_statements.h"
#include "stream/trigger.h"

namespace sluice::sql {

struct CreateSinkStatement {
  bool or_replace = false;
  std::string name;    // as written
  std::string format;  // USING <format>, lower-cased
  Properties options;  // OPTIONS (key [=] value, ...): keys and values as written
  // TRIGGER ...: the trigger of the flows into the sink; nullopt when not written (REFRESH:
  // AvailableNow; sluice run: Default).
  std::optional<stream::Trigger> trigger;
};

struct DropSinkStatement {
  std::string name;
  bool if_exists = false;
};

struct RefreshSinkStatement {
  std::string name;
};

struct ShowSinksStatement {};

using SinkStatement =
    std::variant<CreateSinkStatement, DropSinkStatement, RefreshSinkStatement, ShowSinksStatement>;

}  // namespace sluice::sql
