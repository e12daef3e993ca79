#include "sinks/blackhole_sink.h"

namespace sluice::sinks {

Status BlackholeSink::AddBatch(BatchId /*batch_id*/, const engine::Batch& data,
                               OutputMode /*mode*/) {
  last_rows_ = data.num_rows();
  total_rows_ += data.num_rows();
  ++total_batches_;
  return Status::OK();
}

std::map<std::string, std::string> BlackholeSink::Metrics() const {
  return {{"totalRows", std::to_string(total_rows_.load())},
          {"totalBatches", std::to_string(total_batches_.load())}};
}

}  // namespace sluice::sinks
