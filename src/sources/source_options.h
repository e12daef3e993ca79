// Reading the user's source options (SourceContext::options): case-insensitive names, as
// Spark's CaseInsensitiveMap, and typed values with errors that name the option.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::sources {

class SourceOptions {
 public:
  // `source` names the source in errors ("delta source", "read_files").
  SourceOptions(std::string source, const std::map<std::string, std::string>& options);

  // InvalidArgument naming the first option whose name (case-insensitive) is not in `known`
  // (given in lower case), and listing the known options.
  Status CheckKnown(const std::set<std::string>& known) const;
  // The same option given twice with different case ("maxFilesPerTrigger", "MAXFILESPERTRIGGER").
  Status CheckNoDuplicates() const;

  std::optional<std::string> Get(std::string_view name) const;
  bool Has(std::string_view name) const { return Get(name).has_value(); }
  // Integer value (decimal); InvalidArgument "option 'x' must be ..." otherwise. `min` is the
  // smallest value allowed.
  Result<std::optional<int64_t>> GetInt64(std::string_view name, int64_t min) const;
  // "true"/"false" (case-insensitive).
  Result<std::optional<bool>> GetBool(std::string_view name) const;
  // A byte size: a number with an optional unit b, k/kb, m/mb, g/gb (powers of 1024), as
  // Spark's maxBytesPerTrigger ("10g").
  Result<std::optional<int64_t>> GetBytes(std::string_view name) const;

  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::map<std::string, std::string> lower_;     // lower-case name -> value
  std::map<std::string, std::string> original_;  // lower-case name -> name as written
  std::optional<std::string> duplicate_;
};

}  // namespace sluice::sources
