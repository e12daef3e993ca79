#include "sinks/memory_sink.h"

#include "common/logging.h"

namespace sluice::sinks {

std::string RowToString(const engine::Batch& batch, int64_t row) {
  std::string out;
  for (size_t c = 0; c < batch.num_columns(); ++c) {
    if (c > 0) out += ',';
    out += batch.GetString(row, c).value_or("NULL");
  }
  return out;
}

std::string MemorySink::Description() const {
  return name_.empty() ? "MemorySink" : "MemorySink[" + name_ + "]";
}

Status MemorySink::AddBatch(BatchId batch_id, const engine::Batch& data, OutputMode mode) {
  MutexLock lock(&mu_);
  if (latest_.has_value() && batch_id <= *latest_) {
    SLUICE_LOG(kInfo) << Description() << ": skipping already committed batch " << batch_id;
    ++skipped_;
    last_rows_ = 0;
    return Status::OK();
  }
  if (mode == OutputMode::kComplete) batches_.clear();
  batches_.emplace_back(batch_id, data);
  latest_ = batch_id;
  last_rows_ = data.num_rows();
  return Status::OK();
}

std::optional<int64_t> MemorySink::LastNumOutputRows() const {
  MutexLock lock(&mu_);
  return last_rows_;
}

std::vector<std::pair<BatchId, engine::Batch>> MemorySink::Batches() const {
  MutexLock lock(&mu_);
  return batches_;
}

Result<engine::Batch> MemorySink::AllRows() const {
  std::vector<engine::Batch> parts;
  {
    MutexLock lock(&mu_);
    for (const auto& [id, b] : batches_) {
      if (b.num_columns() > 0) parts.push_back(b);
    }
  }
  return engine::Batch::Concat(parts);
}

std::vector<std::string> MemorySink::RowStrings() const {
  std::vector<std::string> out;
  for (const auto& [id, b] : Batches()) {
    for (int64_t r = 0; r < b.num_rows(); ++r) out.push_back(RowToString(b, r));
  }
  return out;
}

std::optional<BatchId> MemorySink::LatestBatchId() const {
  MutexLock lock(&mu_);
  return latest_;
}

int64_t MemorySink::skipped_batches() const {
  MutexLock lock(&mu_);
  return skipped_;
}

void MemorySink::Clear() {
  MutexLock lock(&mu_);
  batches_.clear();
  latest_.reset();
  last_rows_.reset();
  skipped_ = 0;
}

}  // namespace sluice::sinks
