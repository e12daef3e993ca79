// JSON-lines splitting for the files source (file_source.cc): reads newline-delimited local
// files (directly, as DuckDB's read_text did, 1 MiB at a time into one reused buffer: no
// whole-file copy) and returns their records as one batch, in file order then line order, for
// the SQL that parses them.
//
// Contract (what the previous read_text + string_split SQL did, without its cost, which grew
// faster than linearly with the lines of a file):
// - lines are split on '\n' only;
// - a line whose characters are all Unicode space separators (category Zs, what DuckDB's
//   trim() removes), or that is empty, is skipped;
// - trailing '\r' characters are then removed from each kept line (CRLF files);
// - the content must be valid UTF-8: InvalidArgument naming the file and the line otherwise.
// Columns: fidx BIGINT (1-based index of the file in `paths`), ln BIGINT (0-based line number
// in its file, blank lines counted), line VARCHAR.
// Errors: IOError (or NotFound) naming a file that cannot be opened or read.
// Thread safety: stateless.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"

namespace sluice::sources {

// The schema of ReadJsonLines' batch.
engine::Schema JsonLinesSchema();

// True when `line` is empty or made only of Zs characters (DuckDB's trim() leaves nothing).
// Invalid UTF-8 counts as not blank.
bool IsBlankLine(std::string_view line);

Result<engine::Batch> ReadJsonLines(const std::vector<std::string>& paths);

// The lines ReadJsonLines keeps, one call each, in file then line order:
// on_line(file_index (0-based in `paths`), line_number (0-based, blank lines counted), line).
// The view is valid during the call only. The UTF-8 check is the caller's. Stops at the first
// non-OK status of on_line and returns it; errors otherwise as ReadJsonLines.
Status ForEachJsonLine(const std::vector<std::string>& paths,
                       const std::function<Status(size_t, int64_t, std::string_view)>& on_line);

// ReadJsonLines' error for a line that is not valid UTF-8 (line_number 0-based).
Status InvalidUtf8LineError(const std::string& path, int64_t line_number);

}  // namespace sluice::sources
