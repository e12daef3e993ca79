#include "ops/session_window.h"

#include "common/strings.h"

namespace sluice::ops {

std::string SessionMergeSql(const std::vector<std::string>& key_items, const std::string& wcol,
                            const std::string& row_list,
                            const std::vector<std::string>& merged_items,
                            const std::string& helpers) {
  const std::string start = "struct_extract(" + wcol + ", 'start')";
  const std::string end = "struct_extract(" + wcol + ", 'end')";
  const std::string partition =
      key_items.empty() ? "" : "PARTITION BY " + Join(key_items, ", ") + " ";
  const std::string order = "ORDER BY " + start + ", __ord, __seq";
  std::vector<std::string> group = key_items;
  group.push_back("__island");
  std::vector<std::string> items = key_items;
  items.push_back("{'start': min(" + start + "), 'end': max(" + end + ")} AS " + wcol);
  items.insert(items.end(), merged_items.begin(), merged_items.end());
  return "WITH __u AS (SELECT " + row_list +
         ", 0 AS __ord, 0::BIGINT AS __seq FROM __agg_state "
         "UNION ALL SELECT " +
         row_list +
         ", __ord, __seq FROM __agg_batch), "
         "__o AS (SELECT *, max(" +
         end + ") OVER (" + partition + order +
         " ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS __prev_end FROM __u), "
         "__g AS (SELECT *, sum(CASE WHEN __prev_end IS NOT NULL AND " +
         start + " <= __prev_end THEN 0 ELSE 1 END) OVER (" + partition + order +
         " ROWS UNBOUNDED PRECEDING) AS __island FROM __o) "
         "SELECT *, " +
         helpers + " FROM (SELECT " + Join(items, ", ") + " FROM __g GROUP BY " +
         Join(group, ", ") + ")";
}

}  // namespace sluice::ops
