#include "sources/rate_source.h"

#include <charconv>

#include "sources/start_time_file.h"

namespace sluice::sources {

RateSource::RateSource(const SourceContext& ctx, RateSourceOptions options)
    : ctx_(ctx), options_(options), clock_(ctx.clock) {
  if (!clock_) {
    default_clock_ = DefaultClock();
    clock_ = default_clock_.get();
  }
}

Result<std::unique_ptr<RateSource>> RateSource::Open(const SourceContext& ctx,
                                                     RateSourceOptions options) {
  if (!ctx.engine) return Status::InvalidArgument("RateSource: SourceContext needs an engine");
  if (options.rows_per_second < 0)
    return Status::InvalidArgument("read_rate: option 'rowsPerSecond' must be >= 0");
  if (options.num_partitions < 1)
    return Status::InvalidArgument("read_rate: option 'numPartitions' must be >= 1");
  if (options.ramp_up_seconds < 0)
    return Status::InvalidArgument("read_rate: option 'rampUpTime' must be >= 0");
  if (!ctx.checkpoint_dir.empty() && !ctx.fs)
    return Status::InvalidArgument("RateSource: a checkpoint dir needs fs");
  std::unique_ptr<RateSource> src(new RateSource(ctx, options));
  SLUICE_ASSIGN_OR_RETURN(src->conn_, ctx.engine->Connect());
  engine::DataType ts, big;
  ts.id = engine::TypeId::kTimestampTz;
  big.id = engine::TypeId::kBigInt;
  src->schema_ = {engine::Field{"timestamp", ts, true}, engine::Field{"value", big, true}};
  // The start time is fixed when the source is created (or loaded from the checkpoint).
  SLUICE_RETURN_NOT_OK(src->StartTimeMs().status());
  return src;
}

std::string RateSource::Description() const {
  return "RateStreamV2[rowsPerSecond=" + std::to_string(options_.rows_per_second) +
         ", rampUpTimeSeconds=" + std::to_string(options_.ramp_up_seconds) +
         ", numPartitions=" + std::to_string(options_.num_partitions) + "]";
}

int64_t RateSource::ValueAtSecond(int64_t seconds, int64_t rows_per_second,
                                  int64_t ramp_up_seconds) {
  // Rate grows by rows_per_second / (ramp_up + 1) each second of the ramp-up:
  // sum_{i=0..s} delta * i = delta * s * (s + 1) / 2.
  int64_t delta = rows_per_second / (ramp_up_seconds + 1);
  if (seconds <= ramp_up_seconds) {
    return seconds % 2 == 1 ? (seconds + 1) / 2 * delta * seconds
                            : seconds / 2 * delta * (seconds + 1);
  }
  int64_t ramp = ValueAtSecond(ramp_up_seconds, rows_per_second, ramp_up_seconds);
  return ramp + (seconds - ramp_up_seconds) * rows_per_second;
}

Result<int64_t> RateSource::StartTimeMs() {
  if (start_time_ms_) return *start_time_ms_;
  int64_t now = clock_->NowMs();
  if (ctx_.checkpoint_dir.empty()) {
    start_time_ms_ = now;
    return now;
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(
      int64_t v,
      ReadOrCreateStartTime(*ctx_.fs, fs::JoinPath(ctx_.checkpoint_dir, "0"), now, "rate"),
      Description());
  start_time_ms_ = v;
  return v;
}

Result<int64_t> RateSource::ParseOffset(const OffsetJson& json) const {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(json.data(), json.data() + json.size(), v);
  if (json.empty() || ec != std::errc() || p != json.data() + json.size() || v < 0) {
    return Status::Corruption(Description() + ": invalid offset '" + json +
                              "': expected seconds as an integer");
  }
  return v;
}

Result<std::optional<OffsetJson>> RateSource::LatestOffset(const std::optional<OffsetJson>& start,
                                                           const ReadLimit& limit) {
  (void)limit;
  SLUICE_ASSIGN_OR_RETURN(int64_t t0, StartTimeMs());
  int64_t seconds = std::max<int64_t>(0, (clock_->NowMs() - t0) / 1000);
  if (available_now_seconds_) seconds = std::min(seconds, *available_now_seconds_);
  if (start) {
    SLUICE_ASSIGN_OR_RETURN(int64_t s, ParseOffset(*start));
    if (seconds <= s) return start;
  }
  return std::optional<OffsetJson>(std::to_string(seconds));
}

Status RateSource::PrepareForAvailableNow() {
  SLUICE_ASSIGN_OR_RETURN(int64_t t0, StartTimeMs());
  available_now_seconds_ = std::max<int64_t>(0, (clock_->NowMs() - t0) / 1000);
  return Status::OK();
}

Result<engine::Batch> RateSource::GetBatch(const std::optional<OffsetJson>& start,
                                           const OffsetJson& end) {
  int64_t s = 0;
  if (start) {
    SLUICE_ASSIGN_OR_RETURN(s, ParseOffset(*start));
  }
  SLUICE_ASSIGN_OR_RETURN(int64_t e, ParseOffset(end));
  if (e < s)
    return Status::InvalidArgument(Description() + ": end offset " + end + " is before start " +
                                   *start);
  SLUICE_ASSIGN_OR_RETURN(int64_t t0, StartTimeMs());
  int64_t first = ValueAtSecond(s, options_.rows_per_second, options_.ramp_up_seconds);
  int64_t last = ValueAtSecond(e, options_.rows_per_second, options_.ramp_up_seconds);
  int64_t local_start_ms = t0 + s * 1000;
  std::string ms_per_value = last > first
                                 ? "(CAST(" + std::to_string((e - s) * 1000) + " AS DOUBLE) / " +
                                       std::to_string(last - first) + ")"
                                 : "0.0";
  // Scala's math.round(x) = floor(x + 0.5).
  std::string sql =
      "SELECT to_timestamp(0) + to_microseconds((CAST(floor((v - " + std::to_string(first) +
      ") * " + ms_per_value + " + 0.5) AS BIGINT) + " + std::to_string(local_start_ms) +
      ") * 1000) AS \"timestamp\", v AS \"value\" FROM range(" + std::to_string(first) + ", " +
      std::to_string(last) + ") r(v) ORDER BY (v - " + std::to_string(first) + ") % " +
      std::to_string(options_.num_partitions) + ", v";
  return conn_->Query(sql).WithContext(Description());
}

}  // namespace sluice::sources
