#include "engine/temporary_views.h"

namespace sluice::engine {

Result<std::vector<std::string>> TemporaryViewNames(Connection* conn) {
  SLUICE_ASSIGN_OR_RETURN(
      Batch names, conn->Query("SELECT view_name FROM duckdb_views() WHERE temporary AND NOT "
                               "internal ORDER BY view_name"));
  std::vector<std::string> out;
  for (int64_t r = 0; r < names.num_rows(); ++r) {
    std::optional<std::string> name = names.GetString(r, 0);
    if (name) out.push_back(std::move(*name));
  }
  return out;
}

}  // namespace sluice::engine
