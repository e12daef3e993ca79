// Timestamps as Spark's progress reporter prints them: "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'" in UTC,
// e.g. 1700000000123 -> "2023-11-14T22:13:20.123Z".
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::stream {

// Milliseconds since the epoch -> "yyyy-MM-ddTHH:mm:ss.SSSZ" (UTC). Years outside 0000..9999
// print with as many digits as needed (and a '-' before negative ones); the progress reporter
// never produces such times.
std::string FormatUtcTimestampMs(int64_t epoch_ms);

// The inverse for the exact form above (4-digit year, milliseconds, 'Z'). InvalidArgument naming
// the text otherwise.
Result<int64_t> ParseUtcTimestampMs(std::string_view text);

}  // namespace sluice::stream
