// Internal to src/engine: registers SQL macros written as DuckDB's DefaultMacro rows (schema,
// name, parameters, named parameters, body) in a database's system catalog, so every connection
// sees them. Consecutive rows with the same name become one macro with overloads (by argument
// count). The Spark function files (spark_datetime.cc, spark_json.cc, spark_collections.cc,
// spark_scalars.cc) each hold such a table; a name that DuckDB already has is registered as
// spark_<name> and reached through the dialect's rename table.
//
// Include only from src/engine/*.cc.
#pragma once

#include <cstddef>

#include "duckdb.hpp"
#include "duckdb/catalog/default/default_functions.hpp"
#include "duckdb/main/extension/extension_loader.hpp"

namespace sluice::engine::internal {

// Throws DuckDB exceptions (a body that does not parse, a name that exists).
void RegisterMacros(duckdb::ExtensionLoader& loader, const duckdb::DefaultMacro* macros, size_t n);

template <size_t N>
void RegisterMacros(duckdb::ExtensionLoader& loader, const duckdb::DefaultMacro (&macros)[N]) {
  RegisterMacros(loader, macros, N);
}

// Registers every Spark function of the engine (the files above). Throws DuckDB exceptions.
void RegisterSparkFunctions(duckdb::DatabaseInstance& db);

}  // namespace sluice::engine::internal
