// Internal to src/engine: the process-wide DuckDB database that holds the rows of batches built
// without an Engine (DecodeRows, BatchBuilder), and helpers shared by those. Include only from
// src/engine/*.cc.
#pragma once

#include <cstddef>

#include "duckdb.hpp"

namespace sluice::engine::internal {

// An in-memory DuckDB database (1 thread, extension autoload/autoinstall off, DuckDB's default
// memory limit) created on first use and never destroyed, so batches that hold its rows may live
// until process exit. Thread-safe. Throws DuckDB exceptions if it cannot be created (callers
// use CatchAll).
duckdb::shared_ptr<duckdb::DatabaseInstance> StandaloneDatabase();

// True when s[0, n) is valid UTF-8 (what DuckDB requires of VARCHAR values): no overlong forms,
// no surrogates, nothing above U+10FFFF.
bool IsValidUtf8(const char* s, size_t n);

}  // namespace sluice::engine::internal
