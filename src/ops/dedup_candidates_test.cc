#include "ops/dedup_candidates.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <random>
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

// Many rows against a reference (a std::map of each key's best row): collisions of the hash
// table, ties of event times, late rows, both orderings.
TEST(DedupCandidatesTest, MatchesAReferenceOnManyRows) {
  std::mt19937_64 rng(5);
  engine::BatchBuilder b({{"k", engine::DataType{engine::TypeId::kBigInt}},
                          {"ts", engine::DataType{engine::TypeId::kTimestamp}}});
  std::vector<std::pair<int64_t, int64_t>> rows;
  for (int i = 0; i < 50000; ++i) {
    rows.emplace_back(static_cast<int64_t>(rng() % 9000), static_cast<int64_t>(rng() % 300));
    ASSERT_TRUE(b.AppendInt64(rows.back().first).ok());
    ASSERT_TRUE(b.AppendTimestampMicros(rows.back().second).ok());
    ASSERT_TRUE(b.EndRow().ok());
  }
  auto batch = b.Finish();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  for (bool by_time : {false, true}) {
    DedupCandidateSpec spec;
    spec.key_indexes = {0};
    spec.event_time_index = 1;
    spec.order_by_event_time = by_time;
    spec.late_threshold_us = 20;
    auto got = ComputeDedupCandidates(*batch, spec);
    ASSERT_TRUE(got.ok() && got->has_value());
    std::map<int64_t, size_t> best;  // key -> row
    int64_t late = 0;
    for (size_t r = 0; r < rows.size(); ++r) {
      if (rows[r].second <= 20) {
        ++late;
        continue;
      }
      auto [it, fresh] = best.emplace(rows[r].first, r);
      if (!fresh && by_time && rows[r].second < rows[it->second].second) it->second = r;
    }
    std::vector<int64_t> want;
    for (const auto& [k, r] : best) want.push_back(static_cast<int64_t>(r));
    std::sort(want.begin(), want.end());
    EXPECT_EQ((*got)->rows, want) << "by_time " << by_time;
    EXPECT_EQ((*got)->late_rows, late);
  }
}

}  // namespace
}  // namespace sluice::ops
