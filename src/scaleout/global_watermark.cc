#include "scaleout/global_watermark.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "scaleout/task_layout.h"

namespace sluice::scaleout {

std::string WatermarksDir(std::string_view root) {
  return std::string(root) + "/" + std::string(kWatermarksDirName);
}

std::string WatermarkPath(std::string_view root, int32_t partition) {
  return WatermarksDir(root) + "/" + std::to_string(partition);
}

std::string SerializePublishedWatermark(const PublishedWatermark& w) {
  nlohmann::ordered_json j;
  j["watermarkMs"] = w.watermark_ms;
  j["batchId"] = w.batch_id;
  j["updatedMs"] = w.updated_ms;
  return j.dump();
}

Result<PublishedWatermark> ParsePublishedWatermark(std::string_view bytes) {
  nlohmann::json j = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  auto integer = [&j](const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_number_integer();
  };
  if (!integer("watermarkMs") || !integer("batchId") || !integer("updatedMs")) {
    return Status::Corruption(
        "not a published watermark ({\"watermarkMs\": W, \"batchId\": N, \"updatedMs\": T}): " +
        std::string(bytes.substr(0, 80)));
  }
  return PublishedWatermark{j["watermarkMs"].get<int64_t>(), j["batchId"].get<int64_t>(),
                            j["updatedMs"].get<int64_t>()};
}

Result<WatermarkPolicy> MakeWatermarkPolicy(std::string_view policy, int64_t idle_timeout_ms) {
  const std::string p = AsciiLower(policy);
  if (p != "min" && p != "max") {
    return Status::InvalidArgument("multipleWatermarkPolicy must be 'min' or 'max', got '" +
                                   std::string(policy) + "'");
  }
  if (idle_timeout_ms < 0) {
    return Status::InvalidArgument(
        "sluice.group.watermarkIdleTimeoutMs must be 0 (off) or a positive number of "
        "milliseconds, got " +
        std::to_string(idle_timeout_ms));
  }
  return WatermarkPolicy{p == "max", idle_timeout_ms};
}

int64_t CombineWatermarks(const WatermarkPolicy& policy, int32_t num_partitions,
                          const std::map<int32_t, PublishedWatermark>& published,
                          int32_t own_partition, int64_t own_ms, int64_t now_ms) {
  bool all_reported = true;
  for (int32_t q = 0; q < num_partitions; ++q) {
    if (q != own_partition && !published.count(q)) all_reported = false;
  }
  std::vector<int64_t> values;
  for (int32_t q = 0; q < num_partitions; ++q) {
    auto it = published.find(q);
    if (q == own_partition) {
      values.push_back(it == published.end() ? own_ms : std::max(own_ms, it->second.watermark_ms));
      continue;
    }
    if (it == published.end()) {
      values.push_back(0);  // never published: the smallest value
      continue;
    }
    if (policy.idle_timeout_ms > 0 && all_reported &&
        now_ms - it->second.updated_ms > policy.idle_timeout_ms) {
      continue;  // idle: left out
    }
    values.push_back(it->second.watermark_ms);
  }
  if (own_partition < 0 || own_partition >= num_partitions) values.push_back(own_ms);
  if (values.empty()) return own_ms;
  return policy.use_max ? *std::max_element(values.begin(), values.end())
                        : *std::min_element(values.begin(), values.end());
}

Result<std::map<int32_t, PublishedWatermark>> ReadPublishedWatermarks(fs::FileSystem& fs,
                                                                      std::string_view root) {
  std::map<int32_t, PublishedWatermark> out;
  const std::string dir = WatermarksDir(root);
  Result<std::vector<fs::FileInfo>> entries = fs.List(dir);
  if (!entries.ok()) {
    if (entries.status().IsNotFound()) return out;
    return entries.status().WithContext("listing " + dir);
  }
  for (const fs::FileInfo& e : *entries) {
    if (e.is_directory) continue;
    const std::string name = e.path.substr(e.path.find_last_of('/') + 1);
    Result<int32_t> p = ParseTaskDirName(name);
    if (!p.ok()) continue;  // a temporary file of a replace, or something else
    Result<std::string> bytes = fs.ReadFile(e.path);
    if (!bytes.ok()) {
      if (bytes.status().IsNotFound()) continue;  // being replaced
      return bytes.status().WithContext("reading " + e.path);
    }
    SLUICE_ASSIGN_OR_RETURN_CTX(PublishedWatermark w, ParsePublishedWatermark(*bytes), e.path);
    out[*p] = w;
  }
  return out;
}

GlobalWatermark::GlobalWatermark(std::shared_ptr<fs::FileSystem> fs, std::string root,
                                 int32_t partition, int32_t num_partitions, WatermarkPolicy policy,
                                 std::shared_ptr<Clock> clock)
    : fs_(std::move(fs)),
      root_(std::move(root)),
      partition_(partition),
      num_partitions_(num_partitions),
      policy_(policy),
      clock_(clock ? std::move(clock) : DefaultClock()) {}

Result<int64_t> GlobalWatermark::Combine(int64_t own_ms) {
  const int64_t now = clock_->NowMs();
  if (cache_read_ms_ < 0 || now - cache_read_ms_ >= 200 || now < cache_read_ms_) {
    SLUICE_ASSIGN_OR_RETURN(cache_, ReadPublishedWatermarks(*fs_, root_));
    cache_read_ms_ = now;
  }
  return CombineWatermarks(policy_, num_partitions_, cache_, partition_, own_ms, now);
}

Status GlobalWatermark::Publish(BatchId batch_id, int64_t own_ms) {
  const std::string path = WatermarkPath(root_, partition_);
  if (!published_ms_) {
    Result<std::string> bytes = fs_->ReadFile(path);
    if (bytes.ok()) {
      SLUICE_ASSIGN_OR_RETURN_CTX(PublishedWatermark w, ParsePublishedWatermark(*bytes), path);
      published_ms_ = w.watermark_ms;
    } else if (!bytes.status().IsNotFound()) {
      return bytes.status().WithContext("reading " + path);
    }
  }
  PublishedWatermark w;
  w.watermark_ms = std::max(own_ms, published_ms_.value_or(own_ms));
  w.batch_id = batch_id.value();
  w.updated_ms = clock_->NowMs();
  SLUICE_RETURN_NOT_OK_CTX(fs_->AtomicReplace(path, SerializePublishedWatermark(w)),
                           "publishing the watermark of partition " + std::to_string(partition_));
  published_ms_ = w.watermark_ms;
  cache_[partition_] = w;
  return Status::OK();
}

}  // namespace sluice::scaleout
