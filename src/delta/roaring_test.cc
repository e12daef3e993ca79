#include "delta/roaring.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace sluice::delta {
namespace {

using ::testing::HasSubstr;

// A test-only encoder of the portable format, built by hand from the spec (RoaringFormatSpec), so
// that every container kind and header layout can be produced and then broken.
void PutLe(std::string* out, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

enum class Kind { kArray, kBitmap, kRun };

struct Container {
  uint16_t key;
  Kind kind;
  std::vector<uint16_t> values;  // ascending
};

std::string Encode32(const std::vector<Container>& cs, bool run_cookie) {
  std::string out;
  size_t n = cs.size();
  if (run_cookie) {
    PutLe(&out, 12347 | (static_cast<uint32_t>(n - 1) << 16), 4);
    std::string flags((n + 7) / 8, '\0');
    for (size_t i = 0; i < n; ++i) {
      if (cs[i].kind == Kind::kRun) flags[i / 8] = static_cast<char>(flags[i / 8] | (1 << (i % 8)));
    }
    out += flags;
  } else {
    PutLe(&out, 12346, 4);
    PutLe(&out, n, 4);
  }
  for (const Container& c : cs) {
    PutLe(&out, c.key, 2);
    PutLe(&out, c.values.size() - 1, 2);
  }
  std::vector<std::string> bodies;
  for (const Container& c : cs) {
    std::string body;
    // Without the run cookie there are no run containers: a kRun container is written as the
    // array it then is (the tests keep those small).
    if (c.kind == Kind::kArray || (c.kind == Kind::kRun && !run_cookie)) {
      for (uint16_t v : c.values) PutLe(&body, v, 2);
    } else if (c.kind == Kind::kBitmap) {
      std::vector<uint64_t> words(1024, 0);
      for (uint16_t v : c.values) words[v / 64] |= uint64_t{1} << (v % 64);
      for (uint64_t w : words) PutLe(&body, w, 8);
    } else {
      std::vector<std::pair<uint16_t, uint16_t>> runs;
      for (uint16_t v : c.values) {
        if (!runs.empty() && runs.back().first + runs.back().second + 1 == v) {
          ++runs.back().second;
        } else {
          runs.push_back({v, 0});
        }
      }
      PutLe(&body, runs.size(), 2);
      for (auto [s, l] : runs) {
        PutLe(&body, s, 2);
        PutLe(&body, l, 2);
      }
    }
    bodies.push_back(body);
  }
  if (!run_cookie || n >= 4) {
    size_t pos = out.size() + 4 * n;
    for (const std::string& b : bodies) {
      PutLe(&out, pos, 4);
      pos += b.size();
    }
  }
  for (const std::string& b : bodies) out += b;
  return out;
}

std::string Encode64(const std::vector<std::pair<uint32_t, std::string>>& buckets) {
  std::string out;
  PutLe(&out, buckets.size(), 8);
  for (const auto& [key, bitmap] : buckets) {
    PutLe(&out, key, 4);
    out += bitmap;
  }
  return out;
}

std::set<uint64_t> Values(const RowIndexSet& s) {
  std::set<uint64_t> out;
  for (const RowRange& r : s.ranges) {
    for (uint64_t v = r.begin; v < r.end; ++v) out.insert(v);
  }
  return out;
}

std::vector<uint16_t> Range(uint32_t begin, uint32_t end, uint32_t step = 1) {
  std::vector<uint16_t> out;
  for (uint32_t v = begin; v < end; v += step) out.push_back(static_cast<uint16_t>(v));
  return out;
}

TEST(RoaringTest, ArrayBitmapAndRunContainersInTwoBuckets) {
  std::vector<Container> low = {{0, Kind::kArray, {0, 7, 14}},
                                {1, Kind::kBitmap, Range(0, 65536, 3)},  // 21846 values
                                {5, Kind::kRun, Range(100, 5000)}};
  std::vector<Container> high = {{2, Kind::kArray, {65535}}};
  std::string bytes = Encode64({{0, Encode32(low, true)}, {3, Encode32(high, false)}});
  auto set = DecodeRoaring64(bytes);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  std::set<uint64_t> expected = {0, 7, 14};
  for (uint32_t v = 0; v < 65536; v += 3) expected.insert(65536 + v);
  for (uint32_t v = 100; v < 5000; ++v) expected.insert(5 * 65536 + v);
  expected.insert((uint64_t{3} << 32) | (2 << 16) | 65535);
  EXPECT_EQ(Values(*set), expected);
  EXPECT_EQ(set->Cardinality(), expected.size());
  EXPECT_TRUE(set->Contains(7));
  EXPECT_FALSE(set->Contains(8));
  EXPECT_TRUE(set->Contains(5 * 65536 + 4999));
  EXPECT_FALSE(set->Contains(5 * 65536 + 5000));
}

TEST(RoaringTest, RunCookieWithFourOrMoreContainersHasOffsets) {
  std::vector<Container> cs = {{0, Kind::kRun, Range(0, 10)},
                               {1, Kind::kArray, {3}},
                               {2, Kind::kRun, Range(65000, 65536)},
                               {9, Kind::kArray, {1, 2}}};
  auto set = DecodeRoaring64(Encode64({{0, Encode32(cs, true)}}));
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->Cardinality(), 10u + 1 + 536 + 2);
  EXPECT_TRUE(set->Contains(2 * 65536 + 65535));
  EXPECT_TRUE(set->Contains(9 * 65536 + 2));
}

TEST(RoaringTest, EmptyBitmaps) {
  auto none = DecodeRoaring64(Encode64({}));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->Cardinality(), 0u);
  auto empty_bucket = DecodeRoaring64(Encode64({{0, Encode32({}, false)}}));
  ASSERT_TRUE(empty_bucket.ok()) << empty_bucket.status().ToString();
  EXPECT_EQ(empty_bucket->Cardinality(), 0u);
}

// Every truncation of a valid bitmap fails (never a smaller set), naming a byte offset.
TEST(RoaringTest, EveryTruncationIsCorruption) {
  std::vector<Container> cs = {{0, Kind::kArray, {1, 2, 3}},
                               {1, Kind::kRun, Range(10, 20)},
                               {2, Kind::kBitmap, Range(0, 65536, 2)}};
  std::string bytes = Encode64({{0, Encode32(cs, true)}, {1, Encode32(cs, false)}});
  ASSERT_TRUE(DecodeRoaring64(bytes).ok()) << DecodeRoaring64(bytes).status().ToString();
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto set = DecodeRoaring64(bytes.substr(0, n));
    ASSERT_FALSE(set.ok()) << "prefix of " << n << " bytes decoded";
    EXPECT_TRUE(set.status().IsCorruption()) << set.status().ToString();
    EXPECT_THAT(set.status().message(), HasSubstr("at byte")) << n;
  }
}

TEST(RoaringTest, TrailingBytesAreCorruption) {
  std::string bytes = Encode64({{0, Encode32({{0, Kind::kArray, {1}}}, false)}}) + "x";
  auto set = DecodeRoaring64(bytes);
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("1 bytes after the last bucket"));
}

TEST(RoaringTest, MalformedHeadersAndContainers) {
  std::string good32 = Encode32({{0, Kind::kArray, {1, 2}}}, false);
  struct Case {
    std::string name;
    std::string bytes;
    std::string message;
  };
  std::vector<Case> cases;
  {
    std::string b = good32;
    b[0] = 0x11;  // cookie
    cases.push_back({"cookie", Encode64({{0, b}}), "unknown cookie"});
  }
  cases.push_back(
      {"bucket keys", Encode64({{2, good32}, {1, good32}}), "bucket keys not ascending"});
  cases.push_back({"top bit", Encode64({{0x80000000u, good32}}), "top bit set"});
  cases.push_back(
      {"container keys",
       Encode64({{0, Encode32({{3, Kind::kArray, {1}}, {3, Kind::kArray, {2}}}, false)}}),
       "container keys not ascending"});
  cases.push_back({"array order", Encode64({{0, Encode32({{0, Kind::kArray, {5, 5}}}, false)}}),
                   "array container values not ascending"});
  {
    // A bitmap container whose header claims one value more than its bits.
    std::string b = Encode32({{0, Kind::kBitmap, Range(0, 65536, 2)}}, false);
    b[10] = static_cast<char>(static_cast<unsigned char>(b[10]) + 1);
    cases.push_back({"bitmap cardinality", Encode64({{0, b}}), "bits set, its header says"});
  }
  {
    std::string b = Encode32({{0, Kind::kRun, Range(10, 20)}}, true);
    b[7] = static_cast<char>(static_cast<unsigned char>(b[7]) + 1);  // header cardinality - 1
    cases.push_back({"run cardinality", Encode64({{0, b}}), "its header says"});
  }
  {
    std::string b = Encode32({{0, Kind::kRun, Range(65530, 65536)}}, true);
    b[b.size() - 2] = 0x7F;  // run length past 65535
    cases.push_back({"run overflow", Encode64({{0, b}}), "passes 65535"});
  }
  {
    std::string b = good32;
    b[12] = 99;  // offset of container 0
    cases.push_back({"offset", Encode64({{0, b}}), "offset 99 but it starts at 16"});
  }
  {
    std::string b;
    PutLe(&b, 1000000, 8);
    cases.push_back({"bucket count", b, "does not fit"});
  }
  for (const Case& c : cases) {
    auto set = DecodeRoaring64(c.bytes);
    ASSERT_FALSE(set.ok()) << c.name;
    EXPECT_TRUE(set.status().IsCorruption()) << c.name;
    EXPECT_THAT(set.status().message(), HasSubstr(c.message)) << c.name;
    EXPECT_THAT(set.status().message(), HasSubstr("at byte")) << c.name;
  }
}

TEST(RoaringTest, AppendMergesAdjacentAndDifference) {
  RowIndexSet a;
  a.Append(0, 3);
  a.Append(3, 5);
  a.Append(10, 20);
  EXPECT_EQ(a.ranges, (std::vector<RowRange>{{0, 5}, {10, 20}}));
  RowIndexSet b;
  b.Append(2, 4);
  b.Append(12, 13);
  b.Append(18, 30);
  EXPECT_EQ(Difference(a, b).ranges, (std::vector<RowRange>{{0, 2}, {4, 5}, {10, 12}, {13, 18}}));
  EXPECT_EQ(Difference(b, a).ranges, (std::vector<RowRange>{{20, 30}}));
  EXPECT_EQ(Difference(a, a).ranges, std::vector<RowRange>{});
  EXPECT_EQ(Difference(a, RowIndexSet{}), a);
}

}  // namespace
}  // namespace sluice::delta
