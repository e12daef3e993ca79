#include "sql/auto_cdc_spec.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "common/strings.h"

namespace sluice::sql {
namespace {

const char* ColumnsModeName(AutoCdcSpec::Columns m) {
  switch (m) {
    case AutoCdcSpec::Columns::kAll:
      return "all";
    case AutoCdcSpec::Columns::kExcept:
      return "except";
    case AutoCdcSpec::Columns::kList:
      return "list";
  }
  return "all";
}

}  // namespace

nlohmann::ordered_json AutoCdcSpecToJson(const AutoCdcSpec& spec) {
  nlohmann::ordered_json j;
  j["keys"] = spec.keys;
  j["sequence_by"] = spec.sequence_by;
  j["delete_when"] = spec.delete_when ? nlohmann::ordered_json(*spec.delete_when)
                                      : nlohmann::ordered_json(nullptr);
  j["columns_mode"] = ColumnsModeName(spec.columns_mode);
  j["columns"] = spec.columns;
  j["scd_type"] = spec.scd_type;
  return j;
}

Result<AutoCdcSpec> AutoCdcSpecFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("auto_cdc: not a JSON object");
  AutoCdcSpec s;
  try {
    s.keys = j.at("keys").get<std::vector<std::string>>();
    s.sequence_by = j.at("sequence_by").get<std::string>();
    if (!j.at("delete_when").is_null()) s.delete_when = j.at("delete_when").get<std::string>();
    const std::string mode = j.at("columns_mode").get<std::string>();
    if (mode == "all") {
      s.columns_mode = AutoCdcSpec::Columns::kAll;
    } else if (mode == "except") {
      s.columns_mode = AutoCdcSpec::Columns::kExcept;
    } else if (mode == "list") {
      s.columns_mode = AutoCdcSpec::Columns::kList;
    } else {
      return Status::InvalidArgument("auto_cdc: unknown columns_mode '" + mode + "'");
    }
    s.columns = j.at("columns").get<std::vector<std::string>>();
    s.scd_type = j.at("scd_type").get<int>();
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("auto_cdc: ") + e.what());
  }
  if (s.keys.empty()) return Status::InvalidArgument("auto_cdc: no keys");
  return s;
}

Result<AutoCdcColumns> ResolveAutoCdcColumns(const AutoCdcSpec& spec, const engine::Schema& source,
                                             const std::string& flow) {
  std::string names;
  for (const auto& f : source) names += (names.empty() ? "" : ", ") + f.name;
  auto find = [&](const std::string& name, const std::string& role) -> Result<std::string> {
    for (const auto& f : source) {
      if (AsciiLower(f.name) == AsciiLower(name)) return f.name;
    }
    return Status::InvalidArgument("AUTO CDC flow " + flow + ": " + role + " column '" + name +
                                   "' is not a column of the source (its columns: " + names + ")");
  };
  AutoCdcColumns out;
  std::set<std::string> seen;
  for (const auto& k : spec.keys) {
    SLUICE_ASSIGN_OR_RETURN(std::string name, find(k, "KEYS"));
    if (!seen.insert(AsciiLower(name)).second) {
      return Status::InvalidArgument("AUTO CDC flow " + flow + ": KEYS lists '" + k + "' twice");
    }
    out.keys.push_back(name);
  }
  SLUICE_ASSIGN_OR_RETURN(out.sequence_by, find(spec.sequence_by, "SEQUENCE BY"));
  std::set<std::string> listed;
  for (const auto& c : spec.columns) {
    const std::string role =
        spec.columns_mode == AutoCdcSpec::Columns::kExcept ? "COLUMNS * EXCEPT" : "COLUMNS";
    SLUICE_ASSIGN_OR_RETURN(std::string name, find(c, role));
    if (!listed.insert(AsciiLower(name)).second) {
      return Status::InvalidArgument("AUTO CDC flow " + flow + ": " + role + " lists '" + c +
                                     "' twice");
    }
  }
  for (const auto& f : source) {
    const bool in_list = listed.count(AsciiLower(f.name)) > 0;
    if (spec.columns_mode == AutoCdcSpec::Columns::kExcept && in_list) continue;
    if (spec.columns_mode == AutoCdcSpec::Columns::kList && !in_list) continue;
    out.selected.push_back(f.name);
  }
  for (const auto& k : out.keys) {
    bool found = false;
    for (const auto& c : out.selected) found = found || AsciiLower(c) == AsciiLower(k);
    if (!found) {
      return Status::InvalidArgument("AUTO CDC flow " + flow + ": key column '" + k +
                                     "' must be among the COLUMNS written to the target");
    }
  }
  if (spec.scd_type == 2) {
    for (const auto& c : out.selected) {
      if (AsciiLower(c) == "__start_at" || AsciiLower(c) == "__end_at") {
        return Status::InvalidArgument("AUTO CDC flow " + flow + ": the source column '" + c +
                                       "' clashes with the SCD type 2 column of that name");
      }
    }
  }
  return out;
}

}  // namespace sluice::sql
