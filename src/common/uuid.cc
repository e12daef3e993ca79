#include "common/uuid.h"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <random>

namespace sluice {
namespace {

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng;
  thread_local pid_t seeded_for = 0;
  const pid_t pid = ::getpid();
  if (seeded_for != pid) {
    std::random_device rd;
    std::seed_seq seq{
        rd(),
        rd(),
        rd(),
        rd(),
        static_cast<unsigned>(pid),
        static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count())};
    rng.seed(seq);
    seeded_for = pid;
  }
  return rng;
}

}  // namespace

std::string NewUuidV4() {
  uint64_t hi = Rng()();
  uint64_t lo = Rng()();
  hi = (hi & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;  // variant 10xx
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) out.push_back('-');
    const uint64_t word = i < 16 ? hi : lo;
    out.push_back(kHex[(word >> (4 * (15 - i % 16))) & 0xF]);
  }
  return out;
}

bool IsCanonicalUuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

}  // namespace sluice
