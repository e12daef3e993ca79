// SharedWatermark: a watermark a query shares with other queries (group mode's tasks,
// scaleout/global_watermark.h). The loop (micro_batch_execution.h) computes its own watermark
// from its event times (WatermarkTracker) as always, and when ExecutionOptions::shared_watermark
// is set:
//  - after each batch, the next batch runs with max(the watermark this batch ran with,
//    Combine(own next watermark)), which is also what commits/<N> records; a re-run batch keeps
//    the watermark its offsets/<N> recorded;
//  - after the batch's commit, Publish(batch id, own next watermark) makes it visible to the
//    others (an error fails the query);
//  - on a trigger that finds no new data, Combine(own) is asked again: when the others moved the
//    shared watermark, the query runs with it and, when the plan wants one, runs a no-data batch
//    (so state the shared watermark passed is evicted and its rows emitted).
// Layer: stream/ (the interface only). Thread safety: called on the query thread only.
#pragma once

#include <cstdint>

#include "common/ids.h"
#include "common/result.h"

namespace sluice::stream {

class SharedWatermark {
 public:
  virtual ~SharedWatermark() = default;
  // The watermark the next batch runs with, given this query's own (`own_ms`).
  virtual Result<int64_t> Combine(int64_t own_ms) = 0;
  // After batch `batch_id` committed with `own_ms` as this query's own next watermark.
  virtual Status Publish(BatchId batch_id, int64_t own_ms) = 0;
};

}  // namespace sluice::stream
