// Helpers of the bench programs (bench/*.cc), which stop at the first error: Check unwraps a
// Result or prints "<what>: <status>" to stderr and exits 1; Seconds is the wall time since
// `start`. Not for library code, which returns Status.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "common/result.h"

namespace sluice::bench {

template <typename T>
T Check(Result<T> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, r.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(r).ValueOrDie();
}

inline double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace sluice::bench
