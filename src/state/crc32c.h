// CRC-32C (Castagnoli), the checksum of state checkpoint files (docs/formats/state.md).
// Software slice-by-8; thread-safe (tables are constant).
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice::state {

// Extends `crc` (the CRC of the bytes before `data`; 0 to start) over `data`.
// Crc32c(0, "123456789") == 0xE3069283.
uint32_t Crc32c(uint32_t crc, std::string_view data);
inline uint32_t Crc32c(std::string_view data) { return Crc32c(0, data); }

}  // namespace sluice::state
