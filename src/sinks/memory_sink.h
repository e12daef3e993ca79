// MemorySink: keeps every batch in memory, for tests (Spark's MemorySink).
//
// Exactly-once: like Spark's, a batch id at or below the last one added is skipped ("already
// committed"), so a re-run of batch N after a crash between the sink write and commits/<N> adds
// nothing twice as long as the same MemorySink object is used (it does not survive a process).
// Complete mode replaces everything held with the batch's rows.
//
// Thread safety: AddBatch runs on the query thread; the accessors may be called from any thread
// at any time. Lock discipline: one mutex guards the rows (SLUICE_GUARDED_BY below), taken by every
// public method and held by none of them on return; no callback runs under it.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "sinks/sink.h"

namespace sluice::sinks {

class MemorySink final : public Sink {
 public:
  explicit MemorySink(std::string name = "") : name_(std::move(name)) {}

  std::string Description() const override;
  Status AddBatch(BatchId batch_id, const engine::Batch& data, OutputMode mode) override;
  std::optional<int64_t> LastNumOutputRows() const override;

  // The batches held, oldest first (complete mode: only the latest).
  std::vector<std::pair<BatchId, engine::Batch>> Batches() const;
  // All rows held, concatenated in batch order (the empty Batch() when none).
  Result<engine::Batch> AllRows() const;
  // All rows as text, one string per row: the cells' GetString joined by ',' ("NULL" for NULL).
  std::vector<std::string> RowStrings() const;
  // The last batch id added, or nullopt.
  std::optional<BatchId> LatestBatchId() const;
  // How many AddBatch calls were skipped because the batch was already added.
  int64_t skipped_batches() const;
  // Forgets everything (tests reuse a sink).
  void Clear();

 private:
  const std::string name_;
  mutable Mutex mu_;
  std::vector<std::pair<BatchId, engine::Batch>> batches_ SLUICE_GUARDED_BY(mu_);
  std::optional<BatchId> latest_ SLUICE_GUARDED_BY(mu_);
  std::optional<int64_t> last_rows_ SLUICE_GUARDED_BY(mu_);
  int64_t skipped_ SLUICE_GUARDED_BY(mu_) = 0;
};

// "a,b,NULL": the cells of `row` as text (tests).
std::string RowToString(const engine::Batch& batch, int64_t row);

}  // namespace sluice::sinks
