// Progress values for the server's tests.
#pragma once

#include <string>

#include "stream/progress.h"

namespace sluice::server::testing {

// A batch of query `id` (run `run_id`) with one source reading `rows` rows at the given rates.
inline stream::StreamingQueryProgress MakeProgress(const std::string& id, const std::string& run_id,
                                                   int64_t batch_id, int64_t rows,
                                                   double input_rate, double processed_rate,
                                                   int64_t duration_ms = 100) {
  stream::StreamingQueryProgress p;
  p.id = id;
  p.run_id = run_id;
  p.name = "q";
  p.timestamp = "2024-01-02T03:04:05.678Z";
  p.batch_id = batch_id;
  p.batch_duration = duration_ms;
  p.duration_ms = {
      {"addBatch", duration_ms - 10}, {"latestOffset", 10}, {"triggerExecution", duration_ms}};
  stream::SourceProgress s;
  s.description = "FileStreamSource[/in]";
  s.num_input_rows = rows;
  s.input_rows_per_second = input_rate;
  s.processed_rows_per_second = processed_rate;
  p.sources.push_back(s);
  p.sink.description = "DeltaSink[/out]";
  p.sink.num_output_rows = rows;
  return p;
}

}  // namespace sluice::server::testing
