// BlackholeSink: counts the rows of every batch and discards them (Flink's blackhole connector,
// the sink of the Nexmark benchmark: what is measured is the query, not the output). Used by
// `sluice bench nexmark --sink blackhole`.
//
// Delivery: nothing is written, so the exactly-once contract of sink.h holds trivially; a batch
// re-run after a crash is counted again (the totals are per process, for reporting only).
//
// Thread safety: driven by one query thread; the totals may be read from another thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "sinks/sink.h"

namespace sluice::sinks {

class BlackholeSink final : public Sink {
 public:
  std::string Description() const override { return "BlackholeSink"; }
  // Counts data.num_rows(); never fails.
  Status AddBatch(BatchId batch_id, const engine::Batch& data, OutputMode mode) override;
  std::optional<int64_t> LastNumOutputRows() const override { return last_rows_; }
  std::map<std::string, std::string> Metrics() const override;

  // Rows and batches seen since construction.
  int64_t total_rows() const { return total_rows_.load(); }
  int64_t total_batches() const { return total_batches_.load(); }

 private:
  std::optional<int64_t> last_rows_;
  std::atomic<int64_t> total_rows_{0};
  std::atomic<int64_t> total_batches_{0};
};

}  // namespace sluice::sinks
