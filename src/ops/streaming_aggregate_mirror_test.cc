#include "ops/streaming_aggregate_mirror.h"

#include <gtest/gtest.h>

#include <map>

#include "ops/state_rows.h"

namespace sluice::ops {
namespace {

// A StateIterator over a fixed list of entries.
class VectorIterator final : public state::StateIterator {
 public:
  explicit VectorIterator(std::vector<std::pair<std::string, std::string>> e)
      : entries_(std::move(e)) {}
  bool Valid() const override { return i_ < entries_.size(); }
  std::string_view key() const override { return entries_[i_].first; }
  std::string_view value() const override { return entries_[i_].second; }
  void Next() override { ++i_; }
  void Seek(std::string_view target) override {
    for (i_ = 0; i_ < entries_.size() && entries_[i_].first < target;) ++i_;
  }
  Status status() const override { return Status::OK(); }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
  size_t i_ = 0;
};

TEST(StateMirrorTest, FindPutAndTakeExpiredInKeyOrder) {
  StateMirror m;
  m.Put(StateKey("b", 0), 20, StateValue(20, "rb"));
  m.Put(StateKey("a", 0), 20, StateValue(20, "ra"));
  m.Put(StateKey("c", 10), 30, StateValue(30, "rc"));
  ASSERT_TRUE(m.Find(StateKey("a", 0)).has_value());
  EXPECT_EQ(*m.Find(StateKey("a", 0)), StateValue(20, "ra"));
  EXPECT_FALSE(m.Find(StateKey("a", 10)).has_value());
  m.Put(StateKey("a", 0), 20, StateValue(20, "ra2"));  // an update keeps one entry
  EXPECT_EQ(m.size(), 3u);

  EXPECT_TRUE(m.TakeExpired(19).empty());
  auto gone = m.TakeExpired(25);
  ASSERT_EQ(gone.size(), 2u);
  EXPECT_EQ(gone[0].first, StateKey("a", 0));  // key order, not insertion order
  EXPECT_EQ(gone[0].second, StateValue(20, "ra2"));
  EXPECT_EQ(gone[1].first, StateKey("b", 0));
  EXPECT_EQ(m.size(), 1u);
  EXPECT_FALSE(m.Find(StateKey("a", 0)).has_value());
  EXPECT_EQ(m.TakeExpired(100).size(), 1u);
  EXPECT_EQ(m.size(), 0u);
  EXPECT_EQ(m.bytes(), 0u);
}

TEST(StateMirrorTest, ChangedEvictionTimeMovesTheEntry) {
  StateMirror m;
  m.Put("k", 10, StateValue(10, "r"));
  m.Put("k", 50, StateValue(50, "r"));
  EXPECT_TRUE(m.TakeExpired(20).empty());
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(m.TakeExpired(50).size(), 1u);
}

TEST(StateMirrorTest, RemovedEntriesAreNotTakenAndReputOnesAreTakenOnce) {
  StateMirror m;
  m.Put("a", 10, StateValue(10, "r"));
  m.Put("b", 10, StateValue(10, "r"));
  m.Remove("a");
  m.Remove("missing");
  EXPECT_EQ(m.size(), 1u);
  EXPECT_FALSE(m.Find("a").has_value());
  m.Remove("b");
  m.Put("b", 10, StateValue(10, "s"));  // two index entries for b at 10: taken once
  auto taken = m.TakeExpired(10);
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].first, "b");
  EXPECT_EQ(taken[0].second, StateValue(10, "s"));
  EXPECT_EQ(m.bytes(), 0u);
}

// Random puts, re-puts with other eviction times, removals and expiries against a std::map
// model: the flat table's probing, growth and backward-shift removal keep every entry findable.
TEST(StateMirrorTest, AgreesWithAMapModelUnderRandomOperations) {
  StateMirror m;
  std::map<std::string, std::pair<int64_t, std::string>> model;
  uint64_t seed = 42;
  auto next = [&seed](uint64_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % n;
  };
  for (int step = 0; step < 20000; ++step) {
    const std::string key = StateKey("k" + std::to_string(next(3000)), 0);
    const uint64_t op = next(100);
    if (op < 70) {
      const int64_t evict = static_cast<int64_t>(next(50));
      const std::string value = StateValue(evict, "v" + std::to_string(step));
      m.Put(key, evict, value);
      model[key] = {evict, value};
    } else if (op < 90) {
      m.Remove(key);
      model.erase(key);
    } else {
      const int64_t threshold = static_cast<int64_t>(next(20));
      std::vector<std::pair<std::string, std::string>> want;
      for (auto it = model.begin(); it != model.end();) {
        if (it->second.first > threshold) {
          ++it;
          continue;
        }
        want.emplace_back(it->first, it->second.second);
        it = model.erase(it);
      }
      ASSERT_EQ(m.TakeExpired(threshold), want) << "step " << step;
    }
    ASSERT_EQ(m.size(), model.size()) << "step " << step;
  }
  for (const auto& [key, entry] : model) {
    auto v = m.Find(key);
    ASSERT_TRUE(v.has_value()) << key;
    EXPECT_EQ(*v, entry.second);
  }
  EXPECT_EQ(m.TakeExpired(1000).size(), model.size());
  EXPECT_EQ(m.size(), 0u);
  EXPECT_EQ(m.bytes(), 0u);
}

TEST(StateMirrorTest, LoadsAStoreScanAndRespectsTheByteLimit) {
  std::vector<std::pair<std::string, std::string>> entries = {
      {StateKey("a", 0), StateValue(5, "x")}, {StateKey("b", 0), StateValue(kNeverEvicted, "y")}};
  StateMirror m;
  bool fits = false;
  VectorIterator it(entries);
  ASSERT_TRUE(m.Load(it, 1 << 20, &fits).ok());
  EXPECT_TRUE(fits);
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.TakeExpired(1000).size(), 1u);  // the never-evicted row stays

  VectorIterator again(entries);
  ASSERT_TRUE(m.Load(again, 10, &fits).ok());
  EXPECT_FALSE(fits);
  EXPECT_EQ(m.size(), 0u);

  VectorIterator bad(std::vector<std::pair<std::string, std::string>>{{"k", "abc"}});  // short
  EXPECT_FALSE(m.Load(bad, 1 << 20, &fits).ok());
  EXPECT_EQ(m.size(), 0u);
}

}  // namespace
}  // namespace sluice::ops
