// The global watermark across a group's tasks (docs/scale-out.md "The global watermark across
// tasks"). A task's own watermark comes from the event times of its partition; each task
// publishes it after every commit in <root>/watermarks/<partition> (one small JSON, replaced:
// {"watermarkMs": W, "batchId": N, "updatedMs": T}), and runs its next batch with the policy over
// the published watermarks of every partition of the topic:
//  - min (default) or max (sluice.multipleWatermarkPolicy, Spark's
//    spark.sql.streaming.multipleWatermarkPolicy), never less than the task's last one (the loop
//    keeps the larger, stream/shared_watermark.h);
//  - a partition that has never published counts as 0 (so with min nothing is evicted until
//    every partition has reported once; max ignores it);
//  - with an idle timeout (sluice.group.watermarkIdleTimeoutMs > 0; default 0 = off, as Spark has
//    none), a partition other than the task's own whose file was not updated for that long
//    (its updatedMs, the publisher's clock) is left out, so an idle partition does not hold the
//    global watermark back. The own partition always counts;
//  - a published watermark never moves back: Publish writes max(what the file holds, own).
//
// Thread safety: CombineWatermarks is pure. A GlobalWatermark is one task's, used on its query
// thread; several tasks (processes) read each other's files, each written by AtomicReplace.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"
#include "fs/file_system.h"
#include "stream/shared_watermark.h"

namespace sluice::scaleout {

inline constexpr std::string_view kWatermarksDirName = "watermarks";

// <root>/watermarks and <root>/watermarks/<partition>.
std::string WatermarksDir(std::string_view root);
std::string WatermarkPath(std::string_view root, int32_t partition);

struct PublishedWatermark {
  int64_t watermark_ms = 0;
  int64_t batch_id = 0;
  int64_t updated_ms = 0;  // wall clock of the publisher
  bool operator==(const PublishedWatermark&) const = default;
};
std::string SerializePublishedWatermark(const PublishedWatermark& w);
// Corruption (without the file name) for bytes that are not such an object.
Result<PublishedWatermark> ParsePublishedWatermark(std::string_view bytes);

struct WatermarkPolicy {
  bool use_max = false;
  int64_t idle_timeout_ms = 0;  // 0: off
};
// `policy` "min" or "max" (any case); `idle_timeout_ms` >= 0. InvalidArgument otherwise.
Result<WatermarkPolicy> MakeWatermarkPolicy(std::string_view policy, int64_t idle_timeout_ms);

// The global watermark over partitions [0, num_partitions) from the `published` ones, the task
// of `own_partition` counting max(own_ms, its published value); see the rules above.
int64_t CombineWatermarks(const WatermarkPolicy& policy, int32_t num_partitions,
                          const std::map<int32_t, PublishedWatermark>& published,
                          int32_t own_partition, int64_t own_ms, int64_t now_ms);

// Reads <root>/watermarks/: the published watermark of each partition that has one. Corruption
// naming a file that does not parse; entries that are not partition numbers are ignored.
Result<std::map<int32_t, PublishedWatermark>> ReadPublishedWatermarks(fs::FileSystem& fs,
                                                                      std::string_view root);

class GlobalWatermark final : public stream::SharedWatermark {
 public:
  GlobalWatermark(std::shared_ptr<fs::FileSystem> fs, std::string root, int32_t partition,
                  int32_t num_partitions, WatermarkPolicy policy,
                  std::shared_ptr<Clock> clock = nullptr);

  // Reads the others' files (at most every 200 ms on the same own value; idle triggers ask often).
  Result<int64_t> Combine(int64_t own_ms) override;
  Status Publish(BatchId batch_id, int64_t own_ms) override;

 private:
  std::shared_ptr<fs::FileSystem> fs_;
  const std::string root_;
  const int32_t partition_;
  const int32_t num_partitions_;
  const WatermarkPolicy policy_;
  std::shared_ptr<Clock> clock_;
  std::optional<int64_t> published_ms_;  // what this task's file holds (read once, then kept)
  std::map<int32_t, PublishedWatermark> cache_;
  int64_t cache_read_ms_ = -1;
};

}  // namespace sluice::scaleout
