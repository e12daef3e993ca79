#include "sql/literal_rows.h"

#include "common/strings.h"

namespace sluice::sql {

Result<engine::Batch> LiteralRows(
    engine::Connection* conn, const std::vector<LiteralColumn>& columns,
    const std::vector<std::vector<std::optional<std::string>>>& rows) {
  if (columns.empty()) return Status::InvalidArgument("a result needs at least one column");
  std::string select;
  for (size_t c = 0; c < columns.size(); ++c) {
    if (c) select += ", ";
    select += "CAST(" + QuoteIdentifier("c" + std::to_string(c)) + " AS " + columns[c].type_sql +
              ") AS " + QuoteIdentifier(columns[c].name);
  }
  std::string sql;
  if (rows.empty()) {
    // No rows: a typed empty relation.
    std::string nulls;
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c) nulls += ", ";
      nulls += "NULL AS " + QuoteIdentifier("c" + std::to_string(c));
    }
    sql = "SELECT " + select + " FROM (SELECT " + nulls + ") WHERE false";
  } else {
    std::string values;
    for (size_t r = 0; r < rows.size(); ++r) {
      if (rows[r].size() != columns.size()) {
        return Status::InvalidArgument("row " + std::to_string(r) + " has " +
                                       std::to_string(rows[r].size()) + " values for " +
                                       std::to_string(columns.size()) + " columns");
      }
      values += r ? ", (" : "(";
      for (size_t c = 0; c < columns.size(); ++c) {
        if (c) values += ", ";
        // VARCHAR first so that a NULL in the first row does not type the column as INTEGER.
        values += rows[r][c] ? QuoteLiteral(*rows[r][c]) + "::VARCHAR" : "NULL::VARCHAR";
      }
      values += ")";
    }
    std::string names;
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c) names += ", ";
      names += QuoteIdentifier("c" + std::to_string(c));
    }
    sql = "SELECT " + select + " FROM (VALUES " + values + ") AS v(" + names + ")";
  }
  return conn->Query(sql);
}

}  // namespace sluice::sql
