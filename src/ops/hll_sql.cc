#include "ops/hll_sql.h"

#include <cmath>
#include <cstdint>

namespace sluice::ops {
namespace {

// HyperLogLog++'s linear-counting thresholds for p = 4..18 (Heule et al., Spark's THRESHOLDS).
constexpr int64_t kThresholds[] = {10,   20,   40,    80,    220,   400,    900,   1800,
                                   3100, 6500, 11500, 20000, 50000, 120000, 350000};

std::string M(int p) { return std::to_string(int64_t{1} << p); }

// The register code idx * 64 + rho of one value (NULL for a NULL value).
std::string CodeSql(const std::string& x, int p) {
  const std::string bits = std::to_string(64 - p);
  const std::string h = "hash(" + x + ")";
  const std::string w = "(" + h + " & ((1::UBIGINT << " + bits + ") - 1))";
  return "CASE WHEN (" + x + ") IS NULL THEN NULL ELSE ((" + h + " >> " + bits +
         ") * 64 + CASE WHEN " + w + " = 0 THEN " + std::to_string(64 - p + 1) +
         " ELSE bit_count(xor(" + w + ", " + w + " - 1)) END)::INTEGER END";
}

// The sketch of a list of codes: sorted descending, the first (largest) code of each register.
std::string SketchOf(const std::string& codes) {
  return "(list_transform([list_sort(list_distinct(" + codes +
         "), 'DESC')], __hll_s -> list_filter(__hll_s, (__hll_x, __hll_j) -> __hll_j = 1 OR "
         "__hll_s[__hll_j - 1] // 64 <> __hll_x // 64)))[1]";
}

}  // namespace

Result<int> HllPrecisionForRelativeSd(double rsd) {
  if (!(rsd > 0) || !std::isfinite(rsd)) {
    return Status::InvalidArgument(
        "approx_count_distinct: the relative standard deviation must be a positive number, not " +
        std::to_string(rsd));
  }
  const int p = static_cast<int>(std::ceil(2.0 * std::log2(1.106 / rsd)));
  if (p < 4 || p > 16) {
    return Status::InvalidArgument(
        "approx_count_distinct: a relative standard deviation of " + std::to_string(rsd) +
        " needs " + std::to_string(p) +
        " bits of precision; the supported range is 4..16 (rsd from 0.0043 to 0.39)");
  }
  return p;
}

std::string HllPartialSql(const std::string& x, int p, bool per_row) {
  return SketchOf(per_row ? "[" + CodeSql(x, p) + "]" : "list(" + CodeSql(x, p) + ")");
}

std::string HllMergeSql(const std::string& column, int p) {
  (void)p;
  return SketchOf("flatten(list(" + column + "))");
}

std::string HllEstimateSql(const std::string& column, int p) {
  const double m = static_cast<double>(int64_t{1} << p);
  double alpha = 0.7213 / (1.0 + 1.079 / m);
  if (p == 4) alpha = 0.673;
  if (p == 5) alpha = 0.697;
  if (p == 6) alpha = 0.709;
  const std::string ms = M(p);
  const std::string zeros = "(" + ms + " - len(" + column + "))";
  const std::string raw = "(" + std::to_string(alpha) + " * " + ms + " * " + ms + " / (" + zeros +
                          " + coalesce(list_sum(list_transform(" + column +
                          ", __hll_x -> pow(2.0, -(__hll_x % 64)::DOUBLE))), 0)))";
  const std::string lc = "(" + ms + " * ln(" + ms + " / " + zeros + "::DOUBLE))";
  return "CASE WHEN " + column + " IS NULL THEN 0 WHEN " + zeros + " > 0 AND (" + lc +
         " <= " + std::to_string(kThresholds[p - 4]) + " OR " + raw +
         " <= " + std::to_string(static_cast<int64_t>(2.5 * m)) + ") THEN round(" + lc +
         ")::BIGINT ELSE round(" + raw + ")::BIGINT END";
}

}  // namespace sluice::ops
