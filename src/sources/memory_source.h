// MemorySource: rows added by a test through AddData (Spark's MemoryStream), C++ only.
//
// Offset JSON: the number of batches added so far, a bare integer ("5"), Spark's LongOffset
// shape. (Spark's MemoryStream numbers batches from 0, so its offset is count - 1; Sluice uses
// the count so that "0 batches" has no offset and "(start, end]" is a count range.)
// GetBatch(start, end) concatenates the batches with 0-based index in [start, end).
// LatestOffset ignores read limits (as Spark's MemoryStream); nullopt until data is added.
//
// The data lives only in this object: determinism holds for the object's lifetime; a new
// MemorySource over the same checkpoint must be given the same batches again by the test.
//
// Thread safety: AddData may be called from any thread while the query thread uses the source.
// Lock discipline: one mutex guards the batches and offsets (SLUICE_GUARDED_BY below), taken by
// every public method and held by none of them on return.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "sources/source.h"

namespace sluice::sources {

class MemorySource final : public Source {
 public:
  // `schema`: the columns every added batch must have (names and types, in order).
  MemorySource(engine::Schema schema, std::string name = "memory");

  // Appends one batch; InvalidArgument when its schema differs from schema(). Returns the new
  // offset (the count of batches).
  Result<OffsetJson> AddData(const engine::Batch& batch);

  std::string Description() const override { return "MemoryStream[" + name_ + "]"; }
  const engine::Schema& schema() const override { return schema_; }
  Result<std::optional<OffsetJson>> LatestOffset(const std::optional<OffsetJson>& start,
                                                 const ReadLimit& limit) override;
  Status PrepareForAvailableNow() override;
  Result<engine::Batch> GetBatch(const std::optional<OffsetJson>& start,
                                 const OffsetJson& end) override;
  Status Commit(const OffsetJson& end) override;

  int64_t num_batches() const;
  // The offset Commit last recorded (0 before any).
  int64_t last_committed() const;

  // Parses a memory offset ("5"); InvalidArgument otherwise.
  static Result<int64_t> ParseOffset(const OffsetJson& json);

 private:
  const engine::Schema schema_;
  const std::string name_;
  mutable Mutex mu_;
  std::vector<engine::Batch> batches_ SLUICE_GUARDED_BY(mu_);
  std::optional<int64_t> available_now_ SLUICE_GUARDED_BY(mu_);
  int64_t last_committed_ SLUICE_GUARDED_BY(mu_) = 0;
};

}  // namespace sluice::sources
