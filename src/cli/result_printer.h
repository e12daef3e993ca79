// Printing query results for people (an aligned table) and for scripts (CSV, JSON lines).
#pragma once

#include <ostream>
#include <string_view>

#include "common/result.h"
#include "engine/engine.h"

namespace sluice::cli {

enum class OutputFormat { kTable, kCsv, kJson };

// Parses "table", "csv" or "json".
Result<OutputFormat> ParseOutputFormat(std::string_view text);

// table: header, a rule, one line per row, columns padded to their widest value, NULL shown as
//        NULL; a statement without columns prints nothing.
// csv:   RFC 4180 with a header line; NULL is an empty field, "" an empty quoted field.
// json:  one JSON object per row (JSON lines); numbers and booleans unquoted, NULL as null.
void PrintBatch(const engine::Batch& batch, OutputFormat format, std::ostream& out);

}  // namespace sluice::cli
