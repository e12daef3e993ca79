// Paths in the Delta log are RFC 2396 URIs: relative to the table root or absolute
// ("file:/...", "file:///...", "s3://..."). They are percent-decoded exactly once to get the
// path on storage (Spark writes partition dir `x=A%2FA` as `x=A%252FA` in the log).
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::delta {

// Decodes %XX escapes once. Corruption for a '%' not followed by two hex digits.
Result<std::string> PercentDecode(std::string_view text);

// The storage path of a file named `log_path` in the log of the table at `table_root`.
Result<std::string> ResolveLogPath(const std::string& table_root, std::string_view log_path);

}  // namespace sluice::delta
