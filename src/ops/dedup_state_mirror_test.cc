#include "ops/dedup_state_mirror.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/batch_builder.h"
#include "engine/row_codec.h"

namespace sluice::ops {
namespace {

// A StateIterator over a sorted map, as a store scan would give it.
class MapIterator : public state::StateIterator {
 public:
  explicit MapIterator(const std::map<std::string, std::string>& m)
      : it_(m.begin()), end_(m.end()) {}
  bool Valid() const override { return it_ != end_; }
  std::string_view key() const override { return it_->first; }
  std::string_view value() const override { return it_->second; }
  void Next() override { ++it_; }
  void Seek(std::string_view) override {}
  Status status() const override { return Status::OK(); }

 private:
  std::map<std::string, std::string>::const_iterator it_, end_;
};

TEST(DedupStateTimeTest, EncodingIsTheRowCodecs) {
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{1}, int64_t{1700000000000000},
                    std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    engine::BatchBuilder b({{"v", engine::DataType{engine::TypeId::kBigInt}}});
    ASSERT_TRUE(b.AppendInt64(v).ok());
    ASSERT_TRUE(b.EndRow().ok());
    ASSERT_TRUE(b.AppendNull().ok());
    ASSERT_TRUE(b.EndRow().ok());
    auto batch = b.Finish();
    ASSERT_TRUE(batch.ok());
    auto rows = engine::EncodeRows(*batch, {0});
    ASSERT_TRUE(rows.ok());
    EXPECT_EQ(EncodeDedupStateTime(v), (*rows)[0]) << v;
    EXPECT_EQ(EncodeDedupStateTime(std::nullopt), (*rows)[1]);
    auto decoded = DecodeDedupStateTime((*rows)[0]);
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(*decoded, std::optional<int64_t>(v));
  }
  EXPECT_FALSE(DecodeDedupStateTime("\x01\x01\x00").ok());
  EXPECT_FALSE(DecodeDedupStateTime("").ok());
  auto null = DecodeDedupStateTime(EncodeDedupStateTime(std::nullopt));
  ASSERT_TRUE(null.ok());
  EXPECT_FALSE(null->has_value());
}

TEST(DedupStateMirrorTest, InsertContainsAndExpire) {
  DedupStateMirror m;
  EXPECT_FALSE(m.Contains("a"));
  EXPECT_TRUE(m.Insert("a", 10));
  EXPECT_FALSE(m.Insert("a", 5));  // already there: unchanged
  EXPECT_TRUE(m.Insert("b", -3'000'001));
  EXPECT_TRUE(m.Insert("c", std::nullopt));  // never evicted
  EXPECT_TRUE(m.Insert(std::string(40, 'x'), 2'000'000));
  EXPECT_EQ(m.size(), 4u);
  EXPECT_TRUE(m.TakeExpired(-3'000'002).empty());
  EXPECT_EQ(m.TakeExpired(-3'000'001), std::vector<std::string>{"b"});  // inclusive
  EXPECT_EQ(m.TakeExpired(9), std::vector<std::string>{});
  EXPECT_EQ(m.TakeExpired(10), std::vector<std::string>{"a"});
  EXPECT_FALSE(m.Contains("a"));
  EXPECT_EQ(m.TakeExpired(std::numeric_limits<int64_t>::max()),
            std::vector<std::string>{std::string(40, 'x')});
  EXPECT_EQ(m.size(), 1u);
  EXPECT_TRUE(m.Contains("c"));
  EXPECT_TRUE(m.Insert("a", 1));  // back after it expired
  EXPECT_EQ(m.TakeExpired(1), std::vector<std::string>{"a"});
}

// Random inserts and expiries against std::set / std::multimap: exercises growth, probe runs
// that wrap around the table end and backward-shift deletion.
TEST(DedupStateMirrorTest, MatchesAReferenceModel) {
  std::mt19937_64 rng(7);
  DedupStateMirror m;
  std::map<std::string, int64_t> model;
  int64_t now = 0;
  for (int round = 0; round < 40; ++round) {
    for (int i = 0; i < 3000; ++i) {
      const std::string key = "k" + std::to_string(rng() % 20000);
      const int64_t t = now + static_cast<int64_t>(rng() % 5'000'000);
      const bool fresh = model.emplace(key, t).second;
      ASSERT_EQ(m.Insert(key, t), fresh) << key;
    }
    now += 1'000'000;
    std::vector<std::string> expected;
    for (auto it = model.begin(); it != model.end();) {
      if (it->second <= now) {
        expected.push_back(it->first);
        it = model.erase(it);
      } else {
        ++it;
      }
    }
    std::vector<std::string> got = m.TakeExpired(now);
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, expected) << "round " << round;
    ASSERT_EQ(m.size(), model.size());
    for (int i = 0; i < 200; ++i) {
      const std::string key = "k" + std::to_string(rng() % 20000);
      ASSERT_EQ(m.Contains(key), model.count(key) == 1) << key;
    }
  }
  EXPECT_GT(m.bytes(), m.size() * 16);
}

TEST(DedupStateMirrorTest, LoadFillsOrOnlyCounts) {
  std::map<std::string, std::string> store;
  for (int i = 0; i < 1000; ++i) {
    store["k" + std::to_string(i)] =
        EncodeDedupStateTime(i == 7 ? std::nullopt : std::optional<int64_t>(i));
  }
  DedupStateMirror m;
  bool fits = false;
  int64_t count = -1;
  MapIterator it(store);
  ASSERT_TRUE(m.Load(it, /*timed=*/true, size_t{1} << 30, &fits, &count).ok());
  EXPECT_TRUE(fits);
  EXPECT_EQ(count, 1000);
  EXPECT_EQ(m.size(), 1000u);
  EXPECT_EQ(m.TakeExpired(9).size(), 9u);  // 0..9 but 7 (NULL: never)
  EXPECT_TRUE(m.Contains("k7"));

  MapIterator again(store);
  ASSERT_TRUE(m.Load(again, true, 1000, &fits, &count).ok());
  EXPECT_FALSE(fits);
  EXPECT_EQ(count, 1000);  // counted to the end
  EXPECT_EQ(m.size(), 0u);

  store["bad"] = "\x01\x05";
  MapIterator bad(store);
  Status st = m.Load(bad, true, size_t{1} << 30, &fits, &count);
  EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.ToString();
  MapIterator untimed(store);  // values are not read without times
  ASSERT_TRUE(m.Load(untimed, false, size_t{1} << 30, &fits, &count).ok());
  EXPECT_EQ(m.size(), 1001u);
  EXPECT_TRUE(m.TakeExpired(std::numeric_limits<int64_t>::max()).empty());
}

// The contents in key order are what the mirrored store holds: a round trip through Load gives
// the same map, with NULL times, keys that expired and keys added back.
TEST(DedupStateMirrorTest, ForEachInKeyOrderGivesTheStoreContents) {
  std::mt19937_64 rng(11);
  std::map<std::string, std::string> model;
  DedupStateMirror m;
  for (int i = 0; i < 5000; ++i) {
    const std::string key =
        (i % 3 == 0 ? std::string(20, 'l') : std::string("k")) + std::to_string(rng() % 4000);
    const std::optional<int64_t> t =
        i % 7 == 0 ? std::nullopt : std::optional<int64_t>(static_cast<int64_t>(rng() % 100));
    if (m.Insert(key, t)) model.emplace(key, EncodeDedupStateTime(t));
    if (i % 1000 == 999) {
      for (const std::string& gone : m.TakeExpired(static_cast<int64_t>(i / 100))) {
        ASSERT_EQ(model.erase(gone), 1u) << gone;
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> got;
  m.ForEachInKeyOrder(true, [&](std::string_view k, std::string_view v) {
    got.emplace_back(std::string(k), std::string(v));
  });
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(got, Pairs(model.begin(), model.end()));

  std::map<std::string, std::string> loaded(got.begin(), got.end());
  MapIterator it(loaded);
  DedupStateMirror copy;
  bool fits = false;
  int64_t count = 0;
  ASSERT_TRUE(copy.Load(it, true, size_t{1} << 30, &fits, &count).ok());
  std::vector<std::pair<std::string, std::string>> again;
  copy.ForEachInKeyOrder(true, [&](std::string_view k, std::string_view v) {
    again.emplace_back(std::string(k), std::string(v));
  });
  EXPECT_EQ(again, got);

  // Untimed: every key, with the empty row as its value.
  DedupStateMirror plain;
  for (const char* k : {"b", "a", "c"}) ASSERT_TRUE(plain.Insert(k, std::nullopt));
  std::vector<std::string> keys;
  plain.ForEachInKeyOrder(false, [&](std::string_view k, std::string_view v) {
    EXPECT_EQ(v, kDedupEmptyStateValue);
    keys.emplace_back(k);
  });
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "b", "c"}));
  DedupStateMirror empty;
  empty.ForEachInKeyOrder(true, [&](std::string_view, std::string_view) { ADD_FAILURE(); });
}

}  // namespace
}  // namespace sluice::ops
