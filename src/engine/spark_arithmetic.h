// Internal to src/engine: Spark's division and remainder (ANSI mode, as Spark 4 defaults it), as
// functions of the engine's database. The dialect writes `a / b` as spark_divide(a, b) and
// `a % b` as spark_remainder(a, b) (dialect/arithmetic.cc); each looks at its arguments' types
// when the query is bound (DuckDB's bind_expression) and becomes:
//
//   operands                       spark_divide                    spark_remainder
//   integral, FLOAT, DOUBLE        DOUBLE a / b                    the engine's a % b (the wider
//                                                                  integral type, or DOUBLE)
//   DECIMAL with DECIMAL or        DECIMAL(p, s) of Spark's rule:  DECIMAL(min(p1 - s1, p2 - s2)
//   integral (an integral literal    s = max(6, s1 + p2 + 1),        + max(s1, s2), max(s1, s2))
//   counts its digits, a column      p = p1 - s1 + s2 + s, over 38
//   its type's: INT 10, BIGINT 20)   digits: 38 with s cut down to
//                                    no less than min(s, 6); the
//                                    quotient rounded half up
//   anything else                  the engine's a / b              the engine's a % b
//
// A divisor of 0 (also 0.0 of a DOUBLE) fails the query: [DIVIDE_BY_ZERO] / [REMAINDER_BY_ZERO],
// as Spark's ANSI mode; a DECIMAL quotient with more digits than its precision fails with
// [NUMERIC_VALUE_OUT_OF_RANGE]. NULL in, NULL out.
//
// Include only from src/engine/*.cc.
#pragma once

#include "duckdb.hpp"
#include "duckdb/main/extension/extension_loader.hpp"

namespace sluice::engine::internal {

// Throws DuckDB exceptions.
void RegisterSparkArithmetic(duckdb::ExtensionLoader& loader);

}  // namespace sluice::engine::internal
