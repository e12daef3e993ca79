// The expectations of a streaming table, checked on every batch its query writes
// (docs/pipelines.md "Expectations"; the model is pipeline_expectations.h).
//
// ExpectationSinkFactory wraps the table's sink factory: each batch's rows are registered on a
// connection of the query's engine, the conditions (Spark SQL, rewritten once) are counted over
// them in one query, then
// - a FAIL UPDATE expectation with a failing row fails the batch before the wrapped sink sees
//   it (ExpectationFailed, with the first such row), so nothing of the batch is written or
//   committed;
// - the rows failing a DROP ROW expectation are filtered out;
// - the rest goes to the wrapped sink.
// The counts of the batch (DataQualityJson) are recorded in `metrics` under the batch id before
// the wrapped sink runs; the progress callback takes them (ExpectationMetrics::Take) into the
// batch's progress observedMetrics["data_quality"]. A re-run of batch N records the same counts
// under N again: counts are per batch id, never summed here.
// The first batch checks that every condition is BOOLEAN (InvalidArgument naming it otherwise).
//
// Thread safety: the sink runs on the query thread; ExpectationMetrics is internally locked.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sql/pipeline_expectations.h"
#include "stream/micro_batch_execution.h"

namespace sluice::sql {

class ExpectationMetrics {
 public:
  void Set(int64_t batch_id, nlohmann::ordered_json data_quality);
  // The counts recorded for `batch_id` (removed), or nullopt.
  std::optional<nlohmann::ordered_json> Take(int64_t batch_id);

 private:
  std::mutex mu_;
  std::map<int64_t, nlohmann::ordered_json> by_batch_;
};

stream::SinkFactory ExpectationSinkFactory(stream::SinkFactory inner, std::string dataset,
                                           std::vector<Expectation> expectations,
                                           std::shared_ptr<ExpectationMetrics> metrics);

}  // namespace sluice::sql
