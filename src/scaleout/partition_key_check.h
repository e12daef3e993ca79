// PartitionKeyCheckPlan: a task's plan in group mode when the query keeps state by the column
// the topic is declared partitioned by (state_partitioning.h). Before each batch runs, the
// records of the batch are checked: each record's Kafka key (as text) must equal the declared
// column's value; the first record that does not fails the batch (and so the task, before any
// state or output of the batch is written) with InvalidArgument naming the topic, partition,
// offset, the key and the column's value. Everything else is the wrapped plan's.
//
// Ownership: owns the wrapped plan; borrows the engine (PlanContext). Thread safety: the query
// thread only, as every IncrementalPlan.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "plan/incremental_plan.h"
#include "plan/stream_query_parser.h"
#include "scaleout/state_partitioning.h"

namespace sluice::scaleout {

class PartitionKeyCheckPlan final : public plan::IncrementalPlan {
 public:
  // `relation`: the query's one stream relation (its view is rebuilt for the check).
  PartitionKeyCheckPlan(std::unique_ptr<plan::IncrementalPlan> inner, plan::StreamRelation relation,
                        StatePartitioning partitioning, std::string topic)
      : inner_(std::move(inner)),
        relation_(std::move(relation)),
        partitioning_(std::move(partitioning)),
        topic_(std::move(topic)) {}

  Status Open(const plan::PlanContext& context) override;
  size_t num_sources() const override { return inner_->num_sources(); }
  std::vector<plan::WatermarkNode> watermark_nodes() const override {
    return inner_->watermark_nodes();
  }
  Result<plan::PlanOutput> Execute(const plan::PlanInput& input) override;
  bool WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const override {
    return inner_->WantsNoDataBatch(used_watermark_ms, next_watermark_ms);
  }
  std::string Description() const override { return inner_->Description(); }

 private:
  Status Check(const plan::PlanInput& input);

  std::unique_ptr<plan::IncrementalPlan> inner_;
  plan::StreamRelation relation_;
  StatePartitioning partitioning_;
  std::string topic_;
  std::unique_ptr<engine::Connection> conn_;
};

}  // namespace sluice::scaleout
