#include "sources/memory_source.h"

#include <charconv>

namespace sluice::sources {

MemorySource::MemorySource(engine::Schema schema, std::string name)
    : schema_(std::move(schema)), name_(std::move(name)) {}

namespace {
std::string SchemaText(const engine::Schema& schema) {
  std::string out;
  for (const auto& f : schema) out += (out.empty() ? "" : ", ") + f.name + " " + f.type.ToSql();
  return "(" + out + ")";
}
}  // namespace

Result<OffsetJson> MemorySource::AddData(const engine::Batch& batch) {
  const engine::Schema& got = batch.schema();
  bool same = got.size() == schema_.size();
  for (size_t i = 0; same && i < got.size(); ++i) {
    same = got[i].name == schema_[i].name && got[i].type == schema_[i].type;
  }
  if (!same) {
    return Status::InvalidArgument(Description() + ": AddData got a batch with schema " +
                                   SchemaText(got) + ", expected " + SchemaText(schema_));
  }
  MutexLock lock(&mu_);
  batches_.push_back(batch);
  return std::to_string(batches_.size());
}

Result<int64_t> MemorySource::ParseOffset(const OffsetJson& json) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(json.data(), json.data() + json.size(), v);
  if (json.empty() || ec != std::errc() || p != json.data() + json.size() || v < 0) {
    return Status::InvalidArgument("memory source offset must be a non-negative integer, got '" +
                                   json + "'");
  }
  return v;
}

Result<std::optional<OffsetJson>> MemorySource::LatestOffset(const std::optional<OffsetJson>& start,
                                                             const ReadLimit& limit) {
  (void)limit;
  MutexLock lock(&mu_);
  int64_t n = static_cast<int64_t>(batches_.size());
  if (available_now_) n = std::min(n, *available_now_);
  if (start) {
    SLUICE_ASSIGN_OR_RETURN(int64_t s, ParseOffset(*start));
    if (s > static_cast<int64_t>(batches_.size())) {
      return Status::InvalidArgument(Description() + ": start offset " + *start +
                                     " is beyond the " + std::to_string(batches_.size()) +
                                     " batches added");
    }
    if (n <= s) return start;
  }
  if (n == 0) return std::optional<OffsetJson>();
  return std::optional<OffsetJson>(std::to_string(n));
}

Status MemorySource::PrepareForAvailableNow() {
  MutexLock lock(&mu_);
  available_now_ = static_cast<int64_t>(batches_.size());
  return Status::OK();
}

Result<engine::Batch> MemorySource::GetBatch(const std::optional<OffsetJson>& start,
                                             const OffsetJson& end) {
  int64_t s = 0;
  if (start) {
    SLUICE_ASSIGN_OR_RETURN(s, ParseOffset(*start));
  }
  SLUICE_ASSIGN_OR_RETURN(int64_t e, ParseOffset(end));
  std::vector<engine::Batch> parts;
  {
    MutexLock lock(&mu_);
    if (s > e || e > static_cast<int64_t>(batches_.size())) {
      return Status::InvalidArgument(Description() + ": invalid range (" + std::to_string(s) +
                                     ", " + std::to_string(e) +
                                     "]: " + std::to_string(batches_.size()) + " batches added");
    }
    for (int64_t i = s; i < e; ++i) parts.push_back(batches_[static_cast<size_t>(i)]);
  }
  if (parts.empty()) {
    // No rows: an empty slice of the schema's shape. Without any batch we cannot build one, so
    // s == e can only be asked when at least one batch exists or the range is (0, 0].
    MutexLock lock(&mu_);
    if (!batches_.empty()) return batches_[0].Slice(0, 0);
    return Status::InvalidArgument(Description() + ": empty range with no batches added");
  }
  if (parts.size() == 1) return parts[0];
  return engine::Batch::Concat(parts);
}

Status MemorySource::Commit(const OffsetJson& end) {
  SLUICE_ASSIGN_OR_RETURN(int64_t e, ParseOffset(end));
  MutexLock lock(&mu_);
  last_committed_ = std::max(last_committed_, e);
  return Status::OK();
}

int64_t MemorySource::num_batches() const {
  MutexLock lock(&mu_);
  return static_cast<int64_t>(batches_.size());
}

int64_t MemorySource::last_committed() const {
  MutexLock lock(&mu_);
  return last_committed_;
}

}  // namespace sluice::sources
