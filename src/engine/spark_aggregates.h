// Internal to src/engine: Spark's result types of sum and avg (ANSI mode, as Spark 4 defaults
// it), put in place of the engine's own overloads so that the names stay sum / avg / mean (the
// streaming planner and the C++ API read aggregates by name):
//
//   argument          sum                                  avg
//   TINYINT..BIGINT   BIGINT; a sum past BIGINT's range     DOUBLE (the engine's)
//                     fails with [ARITHMETIC_OVERFLOW]
//   DECIMAL(p, s)     DECIMAL(min(38, p + 10), s); a sum     DECIMAL(min(38, p + 4), min(38, s +
//   4)),
//                     with more digits fails with            the exact mean rounded half up; a
//                     [NUMERIC_VALUE_OUT_OF_RANGE]           mean with more digits fails with
//                                                            [NUMERIC_VALUE_OUT_OF_RANGE]
//   anything else     the engine's                           the engine's
//
// The engine's sum of integers is a 128-bit HUGEINT, which Spark has not and a Delta table cannot
// store; its sum of DECIMAL(p, s) is DECIMAL(38, s) and its avg of one a DOUBLE. NULLs are
// ignored; no row (or only NULLs) gives NULL. A sum is exact until its end and checked there:
// Spark checks each addition, but in an order its partitions decide (a partial sum past BIGINT
// may or may not fail), and always fails when the whole sum is out of range, as Sluice does.
//
// Include only from src/engine/*.cc.
#pragma once

#include "duckdb.hpp"

namespace sluice::engine::internal {

// Replaces the overloads of `db`'s sum, avg and mean named above. Throws DuckDB exceptions
// (an InternalException when the engine has no such overload to replace).
void ReplaceSparkAggregates(duckdb::DatabaseInstance& db);

}  // namespace sluice::engine::internal
