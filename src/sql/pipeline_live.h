// The `LIVE.` prefix of Databricks pipelines (docs/pipelines.md "The language"): `LIVE.x` and
// `STREAM(LIVE.x)` name the dataset `x` of the same pipeline. Sluice's datasets live in one
// warehouse, so the prefix is dropped: the word LIVE followed by '.' (and not itself after a
// '.') is removed from the statement's text, outside strings, quoted names and comments.
// Everything else is kept byte for byte, so line and column numbers inside a statement stay
// those of the file whenever no LIVE. precedes them on their line.
//
// Thread safety: pure function.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::sql {

// InvalidArgument (with line and column) for an unterminated string, name or comment.
Result<std::string> StripLivePrefix(std::string_view statement);

}  // namespace sluice::sql
