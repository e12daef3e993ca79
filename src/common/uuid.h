// Random (version 4) UUIDs: query and run ids (the checkpoint's `metadata` file), Delta data file
// names, transaction ids.
//
// Thread safety: all functions are thread-safe. NewUuidV4 is fork-safe: each thread's generator
// is re-seeded from std::random_device when the process id changes, so a forked child never
// repeats its parent's ids.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

// A fresh RFC 4122 version-4 UUID in canonical lowercase form,
// "xxxxxxxx-xxxx-4xxx-Nxxx-xxxxxxxxxxxx" with N one of 8, 9, a, b. The 122 random bits come from
// a per-thread 64-bit Mersenne Twister seeded from std::random_device (the kernel's getrandom),
// the process id and the clock: cheap enough for one id per data file. Not for cryptographic use.
std::string NewUuidV4();

// True when `text` has the canonical UUID shape: 36 characters, hex digits (either case) with
// '-' at positions 8, 13, 18 and 23. Any version is accepted, as java.util.UUID.fromString does
// for canonical text.
bool IsCanonicalUuid(std::string_view text);

}  // namespace sluice
