// The SQL of the deduplication operators (ops/deduplicate.h): the statements that the operator's
// SQL path runs on its connection, built here so that deduplicate.cc holds the control flow only.
//
// The operator registers the batch under the view names below; the helper columns are its own
// (a reserved "__sluice_dedup_" prefix), added and removed within one batch. Thread safety:
// stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/types.h"

namespace sluice::ops {

inline constexpr char kDedupInputView[] = "__sluice_dedup_input";
inline constexpr char kDedupCandidatesView[] = "__sluice_dedup_candidates";
inline constexpr char kDedupKeptView[] = "__sluice_dedup_kept";
inline constexpr char kDedupPosColumn[] = "__sluice_dedup_pos";      // position in the input
inline constexpr char kDedupRankColumn[] = "__sluice_dedup_rank";    // row_number within a key
inline constexpr char kDedupIndexColumn[] = "__sluice_dedup_index";  // candidate index 0, 1, ...
inline constexpr char kDedupValueColumn[] = "__sluice_dedup_value";  // the state value (BIGINT)
inline constexpr char kDedupKeepColumn[] = "__sluice_dedup_keep";    // 1: the row is kept, else 0

// SQL giving the event time in microseconds of column `name` of type `type`: TIMESTAMP,
// TIMESTAMPTZ, DATE, or a window STRUCT (its "end"). InvalidArgument naming the column otherwise.
Result<std::string> DedupEventTimeMicrosSql(const std::string& name, const engine::DataType& type);

// The late-row condition over kDedupInputView: `event_time_us_sql` <= the late watermark.
std::string DedupLateConditionSql(const std::string& event_time_us_sql, int64_t late_watermark_ms);

// The number of late rows of kDedupInputView (one BIGINT cell).
std::string DedupLateCountSql(const std::string& late_condition);

// What the candidates carry as their state value (an empty string: no value column).
struct DedupCandidatesSqlSpec {
  std::vector<std::string> key_names;  // the key columns' names in the input
  std::string late_condition;          // empty: nothing is late
  std::string order_by;                // the options' ORDER BY items; empty: input order
  // The state value expression: empty for none; else "CAST(<et> AS BIGINT)" or the expiry.
  std::string value_sql;
};

// The state value expression of Deduplicate (the event time) or DeduplicateWithinWatermark (the
// event time, NULL as 0, + the delay).
std::string DedupValueSql(bool within_watermark, const std::string& event_time_us_sql,
                          int64_t delay_ms);

// The candidates of kDedupInputView: its non-late rows that are the first of their key (by
// order_by, then input position), in input order, with kDedupPosColumn, kDedupIndexColumn and
// (when value_sql is set) kDedupValueColumn.
std::string DedupCandidatesSql(const DedupCandidatesSqlSpec& spec);

// The kept rows. `are_candidates`: kDedupCandidatesView is the candidates and kDedupKeptView one
// BIGINT column "i" of kept candidate indexes (the helper columns are dropped; `has_value`: the
// candidates carry kDedupValueColumn). Otherwise kDedupCandidatesView is the input and
// kDedupKeptView a 0/1 mask (kDedupKeepColumn) with a row per input row, joined by position.
std::string DedupSelectKeptSql(bool are_candidates, bool has_value);

}  // namespace sluice::ops
