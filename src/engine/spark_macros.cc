#include "engine/spark_macros.h"

#include <cstring>

#include "engine/spark_aggregates.h"
#include "engine/spark_arithmetic.h"
#include "engine/spark_casts.h"
#include "engine/spark_collections.h"
#include "engine/spark_datetime.h"
#include "engine/spark_json.h"
#include "engine/spark_json_numbers.h"
#include "engine/spark_scalars.h"
#include "engine/spark_string_functions.h"

namespace sluice::engine::internal {

void RegisterMacros(duckdb::ExtensionLoader& loader, const duckdb::DefaultMacro* macros, size_t n) {
  size_t begin = 0;
  while (begin < n) {
    size_t end = begin + 1;
    while (end < n && std::strcmp(macros[end].name, macros[begin].name) == 0) ++end;
    auto info = duckdb::DefaultFunctionGenerator::CreateInternalMacroInfo(
        duckdb::array_ptr<const duckdb::DefaultMacro>(macros + begin, end - begin));
    loader.RegisterFunction(*info);
    begin = end;
  }
}

void RegisterSparkFunctions(duckdb::DatabaseInstance& db) {
  duckdb::ExtensionLoader loader(db, "sluice");
  RegisterSparkDatetime(loader);
  RegisterSparkJson(loader);
  RegisterSparkCollections(loader);
  RegisterSparkScalars(loader);
  RegisterSparkStringFunctions(loader);
  RegisterSparkCasts(loader);
  RegisterSparkArithmetic(loader);
  ReplaceSparkAggregates(db);
  RegisterSparkJsonNumbers(loader);
}

}  // namespace sluice::engine::internal
