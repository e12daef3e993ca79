// Expectations (docs/pipelines.md "Expectations"): Databricks' data quality constraints on a
// streaming table or a materialized view, written in its column list:
//
//   CONSTRAINT name EXPECT (condition) [ON VIOLATION DROP ROW | ON VIOLATION FAIL UPDATE]
//
// A row fails an expectation when its condition is false; NULL passes. Without ON VIOLATION
// the row is kept and counted (warn), DROP ROW drops it, FAIL UPDATE fails the batch.
// This file holds the model, the parse of a column list that mixes column definitions and
// expectations, their JSON in a streaming table's definition, and the SQL a materialized
// view's refresh runs for them. The per-batch check of a streaming table is
// pipeline_expectation_sink.h.
//
// Thread safety: pure functions and value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "engine/engine.h"
#include "plan/token_cursor.h"

namespace sluice::sql {

struct Expectation {
  enum class Action { kWarn, kDropRow, kFailUpdate };
  std::string name;       // as written (unique per dataset, case-insensitively)
  std::string condition;  // the Spark SQL text inside EXPECT ( ... )
  Action action = Action::kWarn;

  bool operator==(const Expectation&) const = default;
};

// "warn", "drop", "fail" (the JSON and messages); ParseExpectationAction is its inverse.
const char* ExpectationActionName(Expectation::Action action);
Result<Expectation::Action> ParseExpectationAction(std::string_view name);

// A column list split in two: the text of its column definitions and other constraints, as
// "(...)" (empty when it held only expectations), and its expectations in order.
struct ColumnListParts {
  std::string columns_text;
  std::vector<Expectation> expectations;
};

// Reads the parenthesized column list at the cursor's '(' (through its ')'). `sql` is the text
// the cursor's tokens point into. InvalidArgument with the line and column for a malformed
// expectation or a name used twice.
Result<ColumnListParts> ParseColumnList(plan::TokenCursor& cursor, std::string_view sql);

nlohmann::json ExpectationsToJson(const std::vector<Expectation>& expectations);
// Corruption naming `what` when malformed.
Result<std::vector<Expectation>> ExpectationsFromJson(const nlohmann::json& j,
                                                      const std::string& what);

// The counts of one expectation over some rows.
struct ExpectationCount {
  std::string name;
  int64_t passed = 0;
  int64_t failed = 0;
};

// Databricks' event log data_quality object: {"dropped_records": n, "expectations": [{"name",
// "dataset", "passed_records", "failed_records"}, ...]}.
nlohmann::ordered_json DataQualityJson(const std::string& dataset, int64_t dropped,
                                       const std::vector<ExpectationCount>& counts);

// The key of the progress observedMetrics entry that holds DataQualityJson.
inline constexpr char kDataQualityMetric[] = "data_quality";

// Materialized views (Spark SQL over the view's query `query`):
// the counts query: one row, columns f0..fN-1 (failed rows per expectation), d (rows failing a
// DROP ROW expectation) and n (all rows);
std::string ExpectationCountsSql(const std::string& query,
                                 const std::vector<Expectation>& expectations);
// the first row failing expectation i;
std::string FirstFailingRowSql(const std::string& query, const Expectation& expectation);
// the query with the rows failing a DROP ROW expectation filtered out (the query itself when
// there is none).
std::string QueryKeepingPassingRows(const std::string& query,
                                    const std::vector<Expectation>& expectations);

// The row `row` of `batch` as a JSON object text ({"id":null,"v":3}: numbers and booleans as
// JSON, other values as the engine shows them), for FAIL UPDATE errors.
std::string RowJson(const engine::Batch& batch, int64_t row);

// The FAIL UPDATE error: InvalidArgument naming the expectation, the dataset, where, the
// condition and the offending row.
Status ExpectationFailed(const Expectation& e, const std::string& dataset, const std::string& where,
                         const std::string& row_json);

}  // namespace sluice::sql
