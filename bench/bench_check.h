// Helpers of the bench programs (bench/*.cc), which stop at the first error: Check unwraps a
// Result (or checks a Status) or prints "<what>: <status>" to stderr and exits 1; Seconds is the
// wall time since `start`; CpuSeconds is the process's CPU time so far; FlagValue, Names and Ints
// read the command line (a bad one: a message and exit 2). Not for library code, which returns
// Status.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/status.h"

namespace sluice::bench {

[[noreturn]] inline void Die(const Status& status, const char* what) {
  std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
  std::exit(1);
}

template <typename T>
T Check(Result<T> r, const char* what) {
  if (!r.ok()) Die(r.status(), what);
  return std::move(r).ValueOrDie();
}

inline void Check(const Status& s, const char* what) {
  if (!s.ok()) Die(s, what);
}

inline double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// CPU seconds of the process so far (all threads, user + system): with other work on the
// machine, work per CPU second is the figure that does not depend on the load.
inline double CpuSeconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// The value after the flag argv[*i] (and *i moves onto it); "<flag> needs a value" and exit 2
// when the flag is the last argument.
inline std::string FlagValue(int argc, char** argv, int* i) {
  if (*i + 1 >= argc) {
    std::fprintf(stderr, "%s needs a value\n", argv[*i]);
    std::exit(2);
  }
  return argv[++*i];
}

// The items of a comma-separated list, empty ones kept: "a,b" -> {a, b}; "" -> {""}.
inline std::vector<std::string> Names(std::string_view text) {
  std::vector<std::string> out;
  for (size_t pos = 0;;) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    out.emplace_back(text.substr(pos, comma - pos));
    if (comma == text.size()) return out;
    pos = comma + 1;
  }
}

// The integers of a comma-separated list ("1,2,4"); an item that is not one: exit 2.
inline std::vector<int> Ints(std::string_view text) {
  std::vector<int> out;
  for (const std::string& item : Names(text)) {
    int v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || item.empty()) {
      std::fprintf(stderr, "'%s' in '%.*s' is not an integer\n", item.c_str(),
                   static_cast<int>(text.size()), text.data());
      std::exit(2);
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace sluice::bench
