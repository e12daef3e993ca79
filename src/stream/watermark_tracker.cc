#include "stream/watermark_tracker.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace sluice::stream {

Result<WatermarkTracker> WatermarkTracker::Make(std::vector<WatermarkNode> nodes,
                                                std::string_view policy,
                                                int64_t recovered_global_ms) {
  std::string p(policy);
  for (char& c : p) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (p != "min" && p != "max") {
    return Status::InvalidArgument("multipleWatermarkPolicy must be 'min' or 'max', got '" +
                                   std::string(policy) + "'");
  }
  return WatermarkTracker(std::move(nodes), p == "max", recovered_global_ms);
}

int64_t WatermarkTracker::Update(const std::vector<EventTimeStats>& stats) {
  if (nodes_.empty()) return global_ms_;
  for (size_t i = 0; i < nodes_.size() && i < stats.size(); ++i) {
    if (stats[i].count <= 0) continue;
    int64_t candidate = stats[i].max_ms - nodes_[i].delay_ms;
    node_ms_[i] = node_ms_[i] ? std::max(*node_ms_[i], candidate) : candidate;
  }
  int64_t agg = use_max_ ? INT64_MIN : INT64_MAX;
  for (const auto& v : node_ms_) {
    int64_t x = v.value_or(0);
    agg = use_max_ ? std::max(agg, x) : std::min(agg, x);
  }
  if (agg > global_ms_) global_ms_ = agg;
  return global_ms_;
}

}  // namespace sluice::stream
