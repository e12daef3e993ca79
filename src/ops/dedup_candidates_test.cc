#include "ops/dedup_candidates.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engine/batch_builder.h"
#include "engine/row_codec.h"

namespace sluice::ops {
namespace {

// The hash pass over a batch: late rows, first row by event time (ties: input order) or by input
// order, state times.
TEST(DedupCandidatesTest, FirstRowOfEachKey) {
  engine::BatchBuilder b({{"k", engine::DataType{engine::TypeId::kVarchar}},
                          {"ts", engine::DataType{engine::TypeId::kTimestamp}}});
  const std::vector<std::pair<std::string, int64_t>> rows = {{"a", 30}, {"b", 5}, {"a", 10},
                                                             {"a", 10}, {"c", 1}, {"b", 50}};
  for (const auto& [k, t] : rows) {
    ASSERT_TRUE(b.AppendString(k).ok());
    ASSERT_TRUE(b.AppendTimestampMicros(t).ok());
    ASSERT_TRUE(b.EndRow().ok());
  }
  auto batch = b.Finish();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  DedupCandidateSpec spec;
  spec.key_indexes = {0};
  spec.event_time_index = 1;
  spec.order_by_event_time = true;
  spec.late_threshold_us = 1;  // c (1 us) is late
  spec.state_time = DedupCandidateSpec::StateTime::kExpiry;
  spec.expiry_delay_us = 100;
  auto got = ComputeDedupCandidates(*batch, spec);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->rows, (std::vector<int64_t>{1, 2}));  // b at 5, the first a at 10
  EXPECT_EQ((*got)->times, (std::vector<std::optional<int64_t>>{105, 110}));
  EXPECT_EQ((*got)->late_rows, 1);
  auto keys = engine::EncodeRows(*batch, {0});
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ((*got)->keys, (std::vector<std::string>{(*keys)[1], (*keys)[2]}));

  spec.order_by_event_time = false;  // input order
  spec.state_time = DedupCandidateSpec::StateTime::kNone;
  got = ComputeDedupCandidates(*batch, spec);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->rows, (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE((*got)->times.empty());

  spec.order_by_event_time = true;  // an overflowing expiry: the SQL path decides
  spec.state_time = DedupCandidateSpec::StateTime::kExpiry;
  spec.expiry_delay_us = std::numeric_limits<int64_t>::max();
  got = ComputeDedupCandidates(*batch, spec);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
}

}  // namespace
}  // namespace sluice::ops
