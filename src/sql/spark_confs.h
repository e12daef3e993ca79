// Spark's configuration names in `SET spark.<...> = value`, as Databricks notebooks and
// pipelines write them at their top.
//
// A Spark conf with a Sluice equivalent is that `sluice.*` setting (settings.h): SET and RESET
// act on it, its value checked as Sluice's. `spark.sql.session.timeZone` is accepted only as UTC,
// the one time zone Sluice's sessions run in. Every other `spark.*` name is refused, naming it
// and Sluice's settings: a conf silently ignored would change results without a word.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace sluice::sql {

struct SparkConfMapping {
  std::string_view spark_name;   // as Spark spells it (matched without regard to case)
  std::string_view sluice_name;  // the setting of settings.h, without "sluice."
};

// Spark's session time zone conf, accepted as UTC only.
inline constexpr std::string_view kSessionTimeZoneConf = "spark.sql.session.timeZone";

// The Spark confs Sluice has an equivalent for.
const std::vector<SparkConfMapping>& SparkConfMappings();

// The `sluice.*` setting that `spark_name` (a name starting with "spark.") stands for.
// InvalidArgument naming the conf when Sluice has no equivalent.
Result<std::string> SluiceSettingOfSparkConf(std::string_view spark_name);

// Whether `spark_name` is spark.sql.session.timeZone, and if so whether `value` is UTC
// (InvalidArgument when it is another zone).
Result<bool> IsSessionTimeZoneConf(std::string_view spark_name, std::string_view value);

}  // namespace sluice::sql
