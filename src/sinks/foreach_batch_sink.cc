#include "sinks/foreach_batch_sink.h"

#include <exception>
#include <string>

namespace sluice::sinks {

Status ForeachBatchSink::AddBatch(BatchId batch_id, const engine::Batch& data, OutputMode mode) {
  (void)mode;
  if (!fn_) return Status::InvalidArgument("foreachBatch: no function given");
  Status st;
  try {
    st = fn_(data, batch_id);
  } catch (const std::exception& e) {
    st = Status::Internal(std::string("the function threw an exception: ") + e.what());
  } catch (...) {
    st = Status::Internal("the function threw an exception");
  }
  if (!st.ok())
    return st.WithContext("foreachBatch function failed in batch " + batch_id.ToString());
  return Status::OK();
}

}  // namespace sluice::sinks
