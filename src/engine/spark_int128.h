// Internal to src/engine: exact 128-bit integer helpers for Spark's DECIMAL rules (the unscaled
// value of a DECIMAL of up to 38 digits is a 128-bit integer: DuckDB's hugeint_t). Used by the
// division of spark_arithmetic.cc and the sum / avg of spark_aggregates.cc. Pure functions.
//
// Include only from src/engine/*.cc.
#pragma once

#include <algorithm>
#include <cstdint>

#include "duckdb.hpp"

namespace sluice::engine::internal {

using u128 = unsigned __int128;
using i128 = __int128;

// The most digits of a DECIMAL (Spark's and DuckDB's).
constexpr int kMaxPrecision = 38;

// 10^n for 0 <= n <= 38.
inline u128 Pow10(int n) {
  u128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

inline i128 ToI128(duckdb::hugeint_t h) {
  return static_cast<i128>((static_cast<u128>(static_cast<uint64_t>(h.upper)) << 64) | h.lower);
}

inline duckdb::hugeint_t FromI128(i128 v) {
  duckdb::hugeint_t h;
  h.lower = static_cast<uint64_t>(static_cast<u128>(v));
  h.upper = static_cast<int64_t>(static_cast<u128>(v) >> 64);
  return h;
}

inline u128 Magnitude(i128 v) { return v < 0 ? static_cast<u128>(0) - static_cast<u128>(v) : v; }

// x * 10^k / y rounded half up (k may be negative), for y > 0. False when the result needs more
// than 38 digits.
inline bool ScaledQuotient(u128 x, u128 y, int k, u128* out) {
  const u128 limit = Pow10(kMaxPrecision);  // results stay below 10^38
  u128 q = x / y;
  u128 r = x % y;
  if (k < 0) {
    const u128 unit = Pow10(std::min(-k, kMaxPrecision));
    const u128 dropped = q % unit;
    q /= unit;
    if (dropped >= unit / 2) ++q;  // the dropped part (with r) is at least half a unit
    *out = q;
    return q < limit;
  }
  if (q >= limit) return false;
  for (int i = 0; i < k; ++i) {
    // 10 * r / y and 10 * r % y without overflow: r < y < 2^127, so r + r never wraps.
    u128 digit = 0, acc = 0;
    for (int j = 0; j < 10; ++j) {
      acc += r;
      if (acc >= y) {
        acc -= y;
        ++digit;
      }
    }
    r = acc;
    if (q > (limit - 1 - digit) / 10) return false;
    q = q * 10 + digit;
  }
  if (r >= y - r) ++q;  // 2r >= y: half up
  *out = q;
  return q < limit;
}

}  // namespace sluice::engine::internal
