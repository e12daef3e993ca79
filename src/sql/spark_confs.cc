#include "sql/spark_confs.h"

#include "common/strings.h"
#include "sql/settings.h"

namespace sluice::sql {

const std::vector<SparkConfMapping>& SparkConfMappings() {
  static const std::vector<SparkConfMapping> kMappings = {
      {"spark.sql.shuffle.partitions", "shufflePartitions"},
      {"spark.sql.streaming.multipleWatermarkPolicy", "multipleWatermarkPolicy"},
      {"spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled",
       "stateStore.changelogCheckpointing"},
      {"spark.sql.streaming.noDataMicroBatches.enabled", "noDataBatches"},
      {"spark.databricks.delta.retentionDurationCheck.enabled", "delta.retentionDurationCheck"},
  };
  return kMappings;
}

Result<std::string> SluiceSettingOfSparkConf(std::string_view spark_name) {
  for (const SparkConfMapping& m : SparkConfMappings()) {
    if (AsciiEqualsIgnoreCase(m.spark_name, spark_name)) return std::string(m.sluice_name);
  }
  std::string mapped;
  for (const SparkConfMapping& m : SparkConfMappings()) {
    if (!mapped.empty()) mapped += ", ";
    mapped += std::string(m.spark_name) + " (sluice." + std::string(m.sluice_name) + ")";
  }
  return Status::InvalidArgument(
      "the Spark setting '" + std::string(spark_name) +
      "' has no Sluice equivalent and is not applied; Spark settings Sluice maps: " + mapped +
      ", " + std::string(kSessionTimeZoneConf) +
      " (UTC only); Sluice's own settings: .settings in the shell or docs/sql-reference.md "
      "'Settings'");
}

Result<bool> IsSessionTimeZoneConf(std::string_view spark_name, std::string_view value) {
  if (!AsciiEqualsIgnoreCase(spark_name, kSessionTimeZoneConf)) return false;
  const std::string zone = AsciiLower(value);
  if (zone == "utc" || zone == "etc/utc" || zone == "z" || zone == "+00:00" || zone == "gmt") {
    return true;
  }
  return Status::InvalidArgument("SET " + std::string(kSessionTimeZoneConf) + " = '" +
                                 std::string(value) +
                                 "': Sluice's sessions run in UTC only (timestamps are read and "
                                 "shown in UTC); set it to 'UTC' or convert with "
                                 "from_utc_timestamp / to_utc_timestamp");
}

}  // namespace sluice::sql
