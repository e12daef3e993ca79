#include "ops/transform_with_state_sql.h"

#include "common/strings.h"
#include "ops/custom_state_codec.h"
#include "ops/stateful_operator.h"

namespace sluice::ops {
std::string TwsLateConditionSql(const std::string& late_prefix, int64_t late_watermark_ms) {
  return late_prefix + std::to_string(WatermarkMicros(late_watermark_ms));
}

std::string TwsLateCountSql(const std::string& late_condition) {
  return std::string("SELECT count(*) FROM ") + kTwsInputView + " WHERE " + late_condition;
}

std::string TwsNotLateSql(const std::string& late_condition) {
  return std::string("SELECT * FROM ") + kTwsInputView + " WHERE NOT coalesce(" + late_condition +
         ", false)";
}

std::string TwsCastSql(const engine::Schema& schema, const std::string& view) {
  std::string out;
  for (const engine::Field& f : schema) {
    out +=
        (out.empty() ? "" : ", ") + ValueCastSql(f.name, f.type) + " AS " + QuoteIdentifier(f.name);
  }
  return "SELECT " + out + " FROM " + view;
}

}  // namespace sluice::ops
