// approx_count_distinct for streaming aggregation: a HyperLogLog sketch (Flajolet et al., with
// the linear-counting range of HyperLogLog++ as Spark's HyperLogLogPlusPlus uses it) written as
// DuckDB SQL, so that StreamingAggregate keeps it as a partial aggregate in its state rows.
//
// A value x (NULLs are ignored) hashes to h = hash(x) (DuckDB's 64-bit hash) and falls in
// register h >> (64 - p) of m = 2^p registers with rho = 1 + the number of trailing zero bits of
// the low 64 - p bits of h (64 - p + 1 when they are all zero); a register keeps the largest rho.
// The sketch of a group is an INTEGER[] of codes register * 64 + rho, one per non-empty register
// (its largest rho), sorted descending: small for small groups, at most m entries. Sketches merge
// by keeping each register's largest code, so the partial sketches of batches and of the state
// combine exactly (the result does not depend on batch boundaries, and a re-run changes nothing).
// Estimate: the raw HyperLogLog estimate E = alpha_m * m^2 / sum(2^-M[j]), except that with V > 0
// empty registers linear counting m * ln(m / V) is used while it is at most HyperLogLog++'s
// threshold for p or E <= 2.5 m (HyperLogLog's small range; HyperLogLog++'s empirical bias
// correction is not applied, so values differ slightly from Spark's). Small counts are within 1
// or 2 of exact. The result is a BIGINT, 0 for a group without non-NULL values.
//
// Precision: Spark's rule p = ceil(2 * log2(1.106 / rsd)) for a relative standard deviation rsd
// (default 0.05, so p = 9 and 512 registers); 4 <= p <= 16.
#pragma once

#include <string>

#include "common/result.h"

namespace sluice::ops {

inline constexpr double kDefaultApproxCountDistinctRsd = 0.05;

// p for a relative standard deviation; InvalidArgument when rsd gives p outside [4, 16].
Result<int> HllPrecisionForRelativeSd(double rsd);

// The partial sketch of a set of values, `x` being SQL over one input row: an aggregate
// expression over a group's rows, or (per_row) a scalar expression of the sketch of one row.
std::string HllPartialSql(const std::string& x, int precision, bool per_row);

// The aggregate expression merging the sketches in column `column` (quoted SQL) of a group.
std::string HllMergeSql(const std::string& column, int precision);

// The estimate (BIGINT) of the sketch in column `column` (quoted SQL).
std::string HllEstimateSql(const std::string& column, int precision);

}  // namespace sluice::ops
