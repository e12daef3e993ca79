// CRC-32C (Castagnoli), the checksum of state checkpoint files (docs/formats/state.md).
// The SSE4.2 crc32 instruction where the CPU has it (x86-64, checked once at run time), else
// software slice-by-8; both give the same values. Thread-safe (tables are constant).
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice::state {

// Extends `crc` (the CRC of the bytes before `data`; 0 to start) over `data`.
// Crc32c(0, "123456789") == 0xE3069283.
uint32_t Crc32c(uint32_t crc, std::string_view data);
inline uint32_t Crc32c(std::string_view data) { return Crc32c(0, data); }

namespace internal {
// The software implementation alone (tests compare it with Crc32c).
uint32_t Crc32cPortable(uint32_t crc, std::string_view data);
}  // namespace internal

}  // namespace sluice::state
