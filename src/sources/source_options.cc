#include "sources/source_options.h"

#include <cctype>
#include <charconv>

#include "common/strings.h"

namespace sluice::sources {

SourceOptions::SourceOptions(std::string source, const std::map<std::string, std::string>& options)
    : source_(std::move(source)) {
  for (const auto& [k, v] : options) {
    std::string lk = AsciiLower(k);
    auto [it, inserted] = lower_.emplace(lk, v);
    if (!inserted && it->second != v && !duplicate_) duplicate_ = k;
    original_.emplace(lk, k);
  }
}

Status SourceOptions::CheckNoDuplicates() const {
  if (duplicate_) {
    return Status::InvalidArgument(
        source_ + ": option '" + *duplicate_ +
        "' is given twice with different values (option names are case-insensitive)");
  }
  return Status::OK();
}

Status SourceOptions::CheckKnown(const std::set<std::string>& known) const {
  SLUICE_RETURN_NOT_OK(CheckNoDuplicates());
  for (const auto& [lk, v] : lower_) {
    if (known.count(lk) == 0) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      return Status::InvalidArgument(source_ + ": unknown option '" + original_.at(lk) +
                                     "' (known options: " + list + ")");
    }
  }
  return Status::OK();
}

std::optional<std::string> SourceOptions::Get(std::string_view name) const {
  auto it = lower_.find(AsciiLower(name));
  if (it == lower_.end()) return std::nullopt;
  return it->second;
}

Result<std::optional<int64_t>> SourceOptions::GetInt64(std::string_view name, int64_t min) const {
  auto v = Get(name);
  if (!v) return std::optional<int64_t>();
  std::string t = Trim(*v);
  int64_t out = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size()) {
    return Status::InvalidArgument(source_ + ": option '" + std::string(name) +
                                   "' must be an integer, got '" + *v + "'");
  }
  if (out < min) {
    return Status::InvalidArgument(source_ + ": option '" + std::string(name) + "' must be >= " +
                                   std::to_string(min) + ", got " + std::to_string(out));
  }
  return std::optional<int64_t>(out);
}

Result<std::optional<bool>> SourceOptions::GetBool(std::string_view name) const {
  auto v = Get(name);
  if (!v) return std::optional<bool>();
  if (std::optional<bool> b = ParseBoolText(*v)) return b;
  return Status::InvalidArgument(source_ + ": option '" + std::string(name) +
                                 "' must be true or false, got '" + *v + "'");
}

Result<std::optional<int64_t>> SourceOptions::GetBytes(std::string_view name) const {
  auto v = Get(name);
  if (!v) return std::optional<int64_t>();
  std::string t = AsciiLower(Trim(*v));
  size_t digits = 0;
  while (digits < t.size() && std::isdigit(static_cast<unsigned char>(t[digits]))) ++digits;
  std::string unit = Trim(std::string_view(t).substr(digits));
  int64_t mult = 0;
  if (unit.empty() || unit == "b")
    mult = 1;
  else if (unit == "k" || unit == "kb")
    mult = 1024;
  else if (unit == "m" || unit == "mb")
    mult = 1024 * 1024;
  else if (unit == "g" || unit == "gb")
    mult = 1024LL * 1024 * 1024;
  else if (unit == "t" || unit == "tb")
    mult = 1024LL * 1024 * 1024 * 1024;
  int64_t n = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + digits, n);
  if (digits == 0 || mult == 0 || ec != std::errc() || p != t.data() + digits || n < 1 ||
      n > INT64_MAX / mult) {
    return Status::InvalidArgument(
        source_ + ": option '" + std::string(name) +
        "' must be a positive byte size such as 1048576, 512k, 10m or 1g, got '" + *v + "'");
  }
  return std::optional<int64_t>(n * mult);
}

}  // namespace sluice::sources
