#include "delta/stats_parsed.h"
#include "common/strings.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

namespace sluice::delta {

using nlohmann::json;

namespace {

// Finds `name` in a JSON object: the exact key, else the first key equal ignoring case.
const json* Field(const json& obj, const std::string& name) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(name);
  if (it != obj.end()) return &*it;
  for (auto i = obj.begin(); i != obj.end(); ++i) {
    if (AsciiEqualsIgnoreCase(i.key(), name)) return &i.value();
  }
  return nullptr;
}

std::optional<std::string> ScalarText(const json& v) {
  if (v.is_null() || v.is_object() || v.is_array()) return std::nullopt;
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::optional<int64_t> Integer(const json* v) {
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  return v->get<int64_t>();
}

}  // namespace

template <typename V>
const V* ParsedFileStats::Find(const Fields<V>& fields, std::string_view column) {
  auto it = std::lower_bound(fields.begin(), fields.end(), column,
                             [](const auto& f, std::string_view c) { return f.first < c; });
  if (it != fields.end() && it->first == column) return &it->second;
  for (const auto& [key, value] : fields) {
    if (AsciiEqualsIgnoreCase(key, column)) return &value;
  }
  return nullptr;
}

const std::string* ParsedFileStats::Text(const Fields<std::optional<std::string>>& fields,
                                         std::string_view column) {
  const std::optional<std::string>* v = Find(fields, column);
  return v != nullptr && v->has_value() ? &**v : nullptr;
}

std::optional<int64_t> ParsedFileStats::NullCount(std::string_view column) const {
  const std::optional<int64_t>* v = Find(null_counts_, column);
  return v != nullptr ? *v : std::nullopt;
}

ParsedFileStats ParsedFileStats::Parse(const std::optional<std::string>& stats_json) {
  ParsedFileStats out;
  if (!stats_json) return out;
  json stats = json::parse(*stats_json, nullptr, false);
  if (stats.is_discarded() || !stats.is_object()) return out;
  out.usable_ = true;
  out.num_records_ = Integer(Field(stats, "numRecords"));
  const json* tight = Field(stats, "tightBounds");
  out.tight_bounds_ = tight == nullptr || !tight->is_boolean() || tight->get<bool>();
  // nlohmann's objects iterate in key order, so the fields come out sorted.
  if (const json* mins = Field(stats, "minValues"); mins && mins->is_object()) {
    for (auto it = mins->begin(); it != mins->end(); ++it)
      out.mins_.emplace_back(it.key(), ScalarText(it.value()));
  }
  if (const json* maxs = Field(stats, "maxValues"); maxs && maxs->is_object()) {
    for (auto it = maxs->begin(); it != maxs->end(); ++it)
      out.maxs_.emplace_back(it.key(), ScalarText(it.value()));
  }
  if (const json* nulls = Field(stats, "nullCount"); nulls && nulls->is_object()) {
    for (auto it = nulls->begin(); it != nulls->end(); ++it)
      out.null_counts_.emplace_back(it.key(), Integer(&it.value()));
  }
  return out;
}

const ParsedFileStats& FileStatsMemo::Get(const AddFile& file) const {
  std::call_once(once_, [&] { parsed_ = ParsedFileStats::Parse(file.stats); });
  return parsed_;
}

}  // namespace sluice::delta
