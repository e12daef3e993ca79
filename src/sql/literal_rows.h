// Small result sets built from text values (DESCRIBE, SHOW ...), through the engine: the rows
// become a VALUES query with each value a quoted literal cast to its column's type.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"

namespace sluice::sql {

struct LiteralColumn {
  std::string name;
  std::string type_sql = "VARCHAR";  // DuckDB type the text values are cast to
};

// `rows[r][c]` is the text of column c in row r, nullopt for NULL. Every row must have one value
// per column (InvalidArgument otherwise).
Result<engine::Batch> LiteralRows(engine::Connection* conn,
                                  const std::vector<LiteralColumn>& columns,
                                  const std::vector<std::vector<std::optional<std::string>>>& rows);

}  // namespace sluice::sql
