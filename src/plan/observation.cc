#include "plan/observation.h"

#include "common/strings.h"
#include "engine/registered_batch.h"

namespace sluice::plan {

namespace {
constexpr char kObservedTable[] = "__observed";
}  // namespace

Result<engine::Batch> EvaluateObservation(engine::Connection* conn, const engine::Batch& rows,
                                          const std::vector<std::string>& exprs) {
  return engine::QueryOver(conn, kObservedTable, rows,
                           "SELECT " + Join(exprs, ", ") + " FROM " + kObservedTable);
}

}  // namespace sluice::plan
