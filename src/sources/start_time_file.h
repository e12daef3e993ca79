// The start time file of the rate and Nexmark sources: <checkpoint>/sources/<i>/0, the wall-clock
// start in ms fixed by the first run (docs/formats/sources.md, "Start time").
//
//   v1
//   0000001700000000000
//
// The number is written zero-padded to 19 digits (the width of the largest int64), so that a file
// cut anywhere is detected: a shorter number is not a start time Sluice writes. Spark's reader
// (`LongOffset(content.toLong)`) reads the padded number as the same value. A file of Spark's (or
// of an older Sluice), unpadded, is read when its number has 13 digits without a leading zero (a
// wall clock between 2001-09-09 and 2286); any other length is Corruption naming the file (a cut
// number, which would otherwise read as a wrong start time and replay different rows).
//
// Thread safety: pure functions over the file system.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "fs/file_system.h"

namespace sluice::sources {

// "v1\n" + the 19-digit zero-padded value (value >= 0).
std::string SerializeStartTime(int64_t start_ms);
// The value of a start file's text; Corruption naming `what` (e.g. "rate source start file
// /ck/sources/0/0") and what is wrong otherwise.
Result<int64_t> ParseStartTime(const std::string& text, const std::string& what);
// The start time at `path`: read it, or create it with `now_ms` (create-if-absent; when another
// starter won the race, its value). `kind` names the source in errors ("rate", "nexmark").
Result<int64_t> ReadOrCreateStartTime(fs::FileSystem& fs, const std::string& path, int64_t now_ms,
                                      const std::string& kind);

}  // namespace sluice::sources
