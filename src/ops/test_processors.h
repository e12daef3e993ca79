// Stateful processors shared by the transformWithState tests of the ops layer and the C++ API.
// Test-only; header-only.
#ifndef SLUICE_OPS_TEST_PROCESSORS_H_
#define SLUICE_OPS_TEST_PROCESSORS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "sluice/stateful_processor.h"

namespace sluice::ops::testing {

// Counts the rows of each key in a ValueState named "count"; outputs (key, running count).
class RunningCount : public StatefulProcessor {
 public:
  Status Init(StatefulProcessorHandle& handle) override {
    SLUICE_ASSIGN_OR_RETURN(count_, handle.GetValueState<int64_t>("count"));
    return Status::OK();
  }
  Result<std::vector<Row>> HandleInputRows(const Row& key, const std::vector<Row>& rows,
                                           const TimerValues&) override {
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> n, count_.Get());
    const int64_t total = n.value_or(0) + static_cast<int64_t>(rows.size());
    SLUICE_RETURN_NOT_OK(count_.Update(total));
    return std::vector<Row>{{key[0], total}};
  }

 private:
  ValueState<int64_t> count_;
};

}  // namespace sluice::ops::testing

#endif  // SLUICE_OPS_TEST_PROCESSORS_H_
