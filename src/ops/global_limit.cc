#include "ops/global_limit.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "engine/batch_builder.h"
#include "engine/row_codec.h"

namespace sluice::ops {
namespace {

const engine::Schema& CountSchema() {
  static const engine::Schema* schema = [] {
    engine::DataType bigint;
    bigint.id = engine::TypeId::kBigInt;
    return new engine::Schema{engine::Field{"count", bigint, false}};
  }();
  return *schema;
}

// The key of the one entry: the row codec encoding of zero columns (its header alone).
std::string CountKey() { return std::string(1, '\x01'); }

Result<std::string> EncodeCount(int64_t count) {
  engine::BatchBuilder b(CountSchema());
  SLUICE_RETURN_NOT_OK(b.AppendInt64(count));
  SLUICE_RETURN_NOT_OK(b.EndRow());
  SLUICE_ASSIGN_OR_RETURN(engine::Batch batch, b.Finish());
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> rows, engine::EncodeRows(batch, {0}));
  return std::move(rows.at(0));
}

Result<int64_t> DecodeCount(std::string_view value) {
  SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch batch, engine::DecodeRows(CountSchema(), {value}),
                              "the globalLimit count in state");
  SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> count, batch.GetInt64(0, 0));
  if (!count || *count < 0) {
    return Status::Corruption("the globalLimit count in state is not a row count >= 0");
  }
  return *count;
}

}  // namespace

Status GlobalLimit::Open(const OperatorContext& context) {
  if (options_.limit < 0) {
    return Status::InvalidArgument("LIMIT of a streaming query: " + std::to_string(options_.limit) +
                                   " is not a row count >= 0");
  }
  OperatorContext one = context;
  one.num_partitions = 1;  // the count is global: one partition, as Spark's single-partition plan
  OperatorStateSpec spec;
  spec.operator_name = kGlobalLimitOperatorName;
  spec.work_dir_kind = "limit-state";
  spec.schema.value.push_back({"count", "BIGINT", false});
  SLUICE_ASSIGN_OR_RETURN(state_, OperatorState::Open(one, std::move(spec)));
  progress_.operator_name = kGlobalLimitOperatorName;
  return Status::OK();
}

Result<engine::Batch> GlobalLimit::Process(const OperatorBatch& batch,
                                           const std::vector<engine::Batch>& inputs) {
  const std::string ctx = "globalLimit, batch " + batch.batch_id.ToString();
  if (state_ == nullptr) return Status::Internal(ctx + ": Process before Open");
  if (inputs.size() != 1) {
    return Status::InvalidArgument(ctx + ": expected one input, got " +
                                   std::to_string(inputs.size()));
  }
  const engine::Batch& input = inputs[0];
  int64_t before = 0;
  int64_t taken = 0;
  auto committed = state_->RunBatch(
      batch.batch_id.value(),
      [&](int32_t, state::StateStore& store) -> Status {
        SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> stored, store.Get(CountKey()));
        if (stored) {
          SLUICE_ASSIGN_OR_RETURN(before, DecodeCount(*stored));
        }
        taken = std::clamp<int64_t>(options_.limit - before, 0, input.num_rows());
        if (taken == 0) return Status::OK();
        SLUICE_ASSIGN_OR_RETURN(std::string value, EncodeCount(before + taken));
        return store.Put(CountKey(), value);
      },
      1);
  if (!committed.ok()) return committed.status().WithContext(ctx);
  StateOperatorProgress p;
  p.operator_name = kGlobalLimitOperatorName;
  p.num_rows_total = before + taken > 0 ? 1 : 0;
  p.num_rows_updated = taken > 0 ? 1 : 0;
  p.num_shuffle_partitions = 1;
  p.num_state_store_instances = 1;
  progress_ = std::move(p);
  return taken == input.num_rows() ? input : input.Slice(0, taken);
}

bool GlobalLimit::WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const {
  (void)used_watermark_ms;
  (void)next_watermark_ms;
  return false;
}

}  // namespace sluice::ops
