#include "sql/settings.h"

#include <algorithm>
#include <cctype>

#include "common/check.h"
#include "common/strings.h"

namespace sluice::sql {
namespace {

constexpr std::string_view kPrefix = "sluice.";

std::string_view StripPrefix(std::string_view name) {
  if (name.size() >= kPrefix.size()) {
    bool match = true;
    for (size_t i = 0; i < kPrefix.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(name[i])) != kPrefix[i]) match = false;
    }
    if (match) name.remove_prefix(kPrefix.size());
  }
  return name;
}

const SettingDefinition* Find(std::string_view name) {
  name = StripPrefix(name);
  for (const SettingDefinition& def : AllSettings()) {
    if (def.name == name) return &def;
  }
  return nullptr;
}

Status Unknown(std::string_view name) {
  std::string known;
  for (const SettingDefinition& def : AllSettings()) {
    if (!known.empty()) known += ", ";
    known += "sluice.";
    known += def.name;
  }
  return Status::InvalidArgument("unknown setting 'sluice." + std::string(StripPrefix(name)) +
                                 "' (known: " + known + ")");
}

}  // namespace

const std::vector<SettingDefinition>& AllSettings() {
  static const std::vector<SettingDefinition> kSettings = [] {
    std::vector<SettingDefinition> v = {
        {"warehouse", SettingKind::kString, "warehouse",
         "directory where table names resolve (<warehouse>/<name>)"},
        {"shufflePartitions", SettingKind::kInteger, "4",
         "state partitions of stateful operators; frozen in a checkpoint when it is created", true},
        {"multipleWatermarkPolicy", SettingKind::kString, "min",
         "how several watermarks combine: min | max", true},
        {"stateStore.changelogCheckpointing", SettingKind::kBoolean, "true",
         "state store writes changelogs per batch and snapshots every few batches", true},
        {"group.watermarkIdleTimeoutMs", SettingKind::kInteger, "0",
         "group mode (--group): leave a partition whose watermark was not updated for this many "
         "ms out of the global watermark; 0: off"},
        {"noDataBatches", SettingKind::kBoolean, "true",
         "run a batch without new data when the watermark would evict state or emit rows"},
        {"delta.retentionDurationCheck", SettingKind::kBoolean, "true",
         "VACUUM refuses a retention shorter than delta.deletedFileRetentionDuration"},
        {"s3.endpoint", SettingKind::kString, "",
         "S3 endpoint http(s)://host[:port] for s3:// paths, process-wide; empty: "
         "AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL / the AWS config file, else AWS"},
        {"s3.region", SettingKind::kString, "",
         "S3 region for s3:// paths, process-wide; empty: AWS_REGION / AWS_DEFAULT_REGION / the "
         "AWS config file, else us-east-1"},
        {"s3.pathStyle", SettingKind::kString, "",
         "true | false: path-style S3 URLs (host/bucket/key), process-wide; empty: on for a "
         "custom endpoint, off for AWS"},
        {"test.crashAt", SettingKind::kString, "",
         "tests only: the next micro-batch stops dead at this point (after_offsets_write, "
         "after_state_commit, after_sink_write, after_commit_write)"},
    };
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return v;
  }();
  return kSettings;
}

Status Settings::Set(std::string_view name, std::string_view value) {
  const SettingDefinition* def = Find(name);
  if (def == nullptr) return Unknown(name);
  std::string v(value);
  switch (def->kind) {
    case SettingKind::kBoolean: {
      std::string lower = AsciiLower(v);
      if (lower != "true" && lower != "false") {
        return Status::InvalidArgument("setting 'sluice." + std::string(def->name) +
                                       "' takes true or false, not '" + v + "'");
      }
      v = lower;
      break;
    }
    case SettingKind::kInteger: {
      bool digits =
          !v.empty() && std::all_of(v.begin() + (v[0] == '-' ? 1 : 0), v.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c)) != 0;
          });
      if (!digits || v == "-") {
        return Status::InvalidArgument("setting 'sluice." + std::string(def->name) +
                                       "' takes an integer, not '" + v + "'");
      }
      break;
    }
    case SettingKind::kString:
      break;
  }
  values_[std::string(def->name)] = std::move(v);
  return Status::OK();
}

Status Settings::Reset(std::string_view name) {
  const SettingDefinition* def = Find(name);
  if (def == nullptr) return Unknown(name);
  values_.erase(std::string(def->name));
  return Status::OK();
}

Result<std::string> Settings::Get(std::string_view name) const {
  const SettingDefinition* def = Find(name);
  if (def == nullptr) return Unknown(name);
  auto it = values_.find(std::string(def->name));
  return it != values_.end() ? it->second : std::string(def->default_value);
}

std::string Settings::GetString(std::string_view name) const {
  Result<std::string> v = Get(name);
  SLUICE_CHECK(v.ok());
  return *v;
}

int64_t Settings::GetInteger(std::string_view name) const { return std::stoll(GetString(name)); }

bool Settings::GetBoolean(std::string_view name) const { return GetString(name) == "true"; }

}  // namespace sluice::sql
