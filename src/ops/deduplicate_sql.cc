#include "ops/deduplicate_sql.h"

#include "common/strings.h"
#include "ops/stateful_operator.h"

namespace sluice::ops {

Result<std::string> DedupEventTimeMicrosSql(const std::string& name, const engine::DataType& type) {
  const std::string q = QuoteIdentifier(name);
  switch (type.id) {
    case engine::TypeId::kTimestamp:
    case engine::TypeId::kTimestampTz:
      return "epoch_us(" + q + ")";
    case engine::TypeId::kDate:
      return "epoch_us(CAST(" + q + " AS TIMESTAMP))";
    case engine::TypeId::kStruct:
      for (const engine::Field& f : type.children) {
        if (f.name == "end" && (f.type.id == engine::TypeId::kTimestamp ||
                                f.type.id == engine::TypeId::kTimestampTz)) {
          return "epoch_us(" + q + ".\"end\")";
        }
      }
      break;
    default:
      break;
  }
  return Status::InvalidArgument("event-time column " + name + " has type " + type.ToSql() +
                                 "; deduplication needs TIMESTAMP, TIMESTAMP WITH TIME ZONE, DATE "
                                 "or a window STRUCT with an \"end\" field");
}

std::string DedupLateConditionSql(const std::string& event_time_us_sql, int64_t late_watermark_ms) {
  return event_time_us_sql + " <= " + std::to_string(WatermarkMicros(late_watermark_ms));
}

std::string DedupLateCountSql(const std::string& late_condition) {
  return std::string("SELECT count(*) FROM ") + kDedupInputView + " WHERE " + late_condition;
}

std::string DedupValueSql(bool within_watermark, const std::string& event_time_us_sql,
                          int64_t delay_ms) {
  return !within_watermark ? "CAST(" + event_time_us_sql + " AS BIGINT)"
                           : "CAST(coalesce(" + event_time_us_sql + ", 0) + " +
                                 std::to_string(WatermarkMicros(delay_ms)) + " AS BIGINT)";
}

std::string DedupCandidatesSql(const DedupCandidatesSqlSpec& spec) {
  const std::string where =
      spec.late_condition.empty() ? "" : " WHERE NOT coalesce(" + spec.late_condition + ", false)";
  const std::string value =
      spec.value_sql.empty() ? "" : ", " + spec.value_sql + " AS " + kDedupValueColumn;
  std::string partition_by;
  for (const std::string& name : spec.key_names) {
    if (!partition_by.empty()) partition_by += ", ";
    partition_by += QuoteIdentifier(name);
  }
  std::string order_by = spec.order_by.empty() ? "" : spec.order_by + ", ";
  order_by += kDedupPosColumn;
  return std::string("SELECT * EXCLUDE (") + kDedupRankColumn + "), row_number() OVER (ORDER BY " +
         kDedupPosColumn + ") - 1 AS " + kDedupIndexColumn +
         " FROM (SELECT *, row_number() OVER (PARTITION BY " + partition_by + " ORDER BY " +
         order_by + ") AS " + kDedupRankColumn + " FROM (SELECT *" + value +
         ", row_number() OVER () AS " + kDedupPosColumn + " FROM " + kDedupInputView + where +
         ")) WHERE " + kDedupRankColumn + " = 1 ORDER BY " + kDedupPosColumn;
}

std::string DedupSelectKeptSql(bool are_candidates, bool has_value) {
  if (are_candidates) {
    std::string exclude = std::string(kDedupPosColumn) + ", " + kDedupIndexColumn;
    if (has_value) exclude += std::string(", ") + kDedupValueColumn;
    return std::string("SELECT * EXCLUDE (") + exclude + ") FROM " + kDedupCandidatesView +
           " WHERE " + kDedupIndexColumn + " IN (SELECT i FROM " + kDedupKeptView + ") ORDER BY " +
           kDedupIndexColumn;
  }
  // A mask row per input row, joined by position: no window, hash join or sort.
  return std::string("SELECT * EXCLUDE (") + kDedupKeepColumn + ") FROM " + kDedupCandidatesView +
         " POSITIONAL JOIN " + kDedupKeptView + " WHERE " + kDedupKeepColumn + " = 1";
}

}  // namespace sluice::ops
