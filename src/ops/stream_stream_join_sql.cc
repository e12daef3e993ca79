#include "ops/stream_stream_join_sql.h"

#include "common/strings.h"

namespace sluice::ops {

std::string JoinCommonTypeSql(const std::string& a, const std::string& b) {
  return "SELECT * FROM (SELECT NULL::" + a + " AS k) UNION ALL SELECT * FROM (SELECT NULL::" + b +
         " AS k)";
}

std::string JoinCastKeysSql(const std::string& table,
                            const std::vector<std::pair<std::string, std::string>>& casts) {
  std::string sql = "SELECT * REPLACE (";
  for (size_t i = 0; i < casts.size(); ++i) {
    if (i > 0) sql += ", ";
    sql += "CAST(" + QuoteIdentifier(casts[i].first) + " AS " + casts[i].second + ") AS " +
           QuoteIdentifier(casts[i].first);
  }
  sql += ") FROM ";
  sql += table;
  return sql;
}

std::string JoinConditionSql(const std::string& condition_sql) {
  return "SELECT coalesce((" + condition_sql + ")::BOOLEAN, false) AS m FROM " +
         std::string(kJoinCandidatesTable);
}

}  // namespace sluice::ops
