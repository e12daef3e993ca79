#include "plan/window_sql.h"

namespace sluice::plan {

std::string WindowStartSql(const std::string& ts_sql, int64_t slide_us, const std::string& index) {
  // Spark: start = ts - ((ts - startTime) % slide + slide) % slide, then minus k slides.
  std::string us = "epoch_us(" + ts_sql + ")";
  std::string slide = std::to_string(slide_us);
  std::string offset = "(((" + us + " % " + slide + ") + " + slide + ") % " + slide + ")";
  if (!index.empty()) offset = "(" + offset + " + (" + index + ") * " + slide + ")";
  return "(" + ts_sql + " - to_microseconds(" + offset + "))";
}

Status DefineWindowMacros(engine::Connection& conn) {
  std::string size_us = "CAST(epoch(CAST(size AS INTERVAL)) * 1000000 AS BIGINT)";
  std::string offset = "(((epoch_us(ts) % " + size_us + ") + " + size_us + ") % " + size_us + ")";
  SLUICE_RETURN_NOT_OK(conn.Execute(
      "CREATE OR REPLACE TEMP MACRO __sluice_window(ts, size) AS CASE WHEN "
      "datepart('year', CAST(size AS INTERVAL)) * 12 + datepart('month', CAST(size AS INTERVAL)) "
      "<> 0 THEN error('Intervals greater than a month is not supported (' || CAST(size AS "
      "VARCHAR) || '). The window duration of window() must be a fixed length: write it in days "
      "or weeks, e.g. ''30 days''') WHEN ts IS NULL THEN NULL "
      "ELSE {'start': ts - to_microseconds(" +
      offset + "), 'end': ts - to_microseconds(" + offset + ") + to_microseconds(" + size_us +
      ")} END"));
  auto exists = conn.Query(
      "SELECT count(*) FROM duckdb_functions() WHERE function_name = 'timestamp_seconds'");
  if (exists.ok() && exists->num_rows() == 1) {
    auto n = exists->GetInt64(0, 0);
    if (n.ok() && n->value_or(0) == 0) {
      SLUICE_RETURN_NOT_OK(
          conn.Execute("CREATE OR REPLACE TEMP MACRO timestamp_seconds(x) AS to_timestamp(x)"));
    }
  }
  return Status::OK();
}

}  // namespace sluice::plan
