// Random (version 4) UUIDs for query ids (the checkpoint's `metadata` file) and run ids.
//
// Thread safety: all functions are thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace sluice::stream {

// A fresh RFC 4122 version-4 UUID in canonical lowercase form,
// "xxxxxxxx-xxxx-4xxx-Nxxx-xxxxxxxxxxxx" with N one of 8, 9, a, b. The 122 random bits come from
// std::random_device (the kernel's getrandom / /dev/urandom on Linux), reseeded per call, so
// forked children never repeat their parent's ids. Not for cryptographic use.
std::string NewUuidV4();

// True when `text` has the canonical UUID shape: 36 characters, hex digits (either case) with
// '-' at positions 8, 13, 18 and 23. Any version is accepted, as java.util.UUID.fromString does
// for canonical text.
bool IsCanonicalUuid(std::string_view text);

}  // namespace sluice::stream
