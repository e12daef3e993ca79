#include "sources/nexmark/nexmark_json.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sluice::nexmark {
namespace {

// 64-bit FNV-1a of a byte string: a stable digest to pin a long output in a test.
uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char b : bytes) {
    h ^= b;
    h *= 0x100000001b3ull;
  }
  return h;
}

// The first 100,000 events with the default parameters: the size and digest of the reference
// generator's JSON lines (nexmark_reference_test.cc compares byte for byte where the reference is
// at hand; these two numbers were taken from its output), so that `make test` catches any change
// of the generated data without it.
TEST(NexmarkJsonTest, DefaultStreamDigestIsTheReferences) {
  std::ostringstream got;
  const Status s = EmitJson(NexmarkConfig{}, 0, 100000, got);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::string out = got.str();
  EXPECT_EQ(out.size(), 33157887u);
  EXPECT_EQ(Fnv1a64(out), 0xcd89f9819f3c7f1full);
}

TEST(NexmarkJsonTest, TimestampFormat) {
  JsonFormatter f;
  auto fmt = [&f](int64_t ms) {
    std::string s;
    f.AppendTimestamp(ms, &s);
    return s;
  };
  EXPECT_EQ(fmt(0), "1970-01-01 00:00:00.000");
  EXPECT_EQ(fmt(1704067200000), "2024-01-01 00:00:00.000");
  EXPECT_EQ(fmt(1704067200999), "2024-01-01 00:00:00.999");
  EXPECT_EQ(fmt(1704067201007), "2024-01-01 00:00:01.007");
  EXPECT_EQ(fmt(951825600050), "2000-02-29 12:00:00.050");
  EXPECT_EQ(fmt(4107542399999), "2100-02-28 23:59:59.999");
  EXPECT_EQ(fmt(4107542400000), "2100-03-01 00:00:00.000");
  EXPECT_EQ(fmt(253402300799999), "9999-12-31 23:59:59.999");
}

TEST(NexmarkJsonTest, EscapesLikePythonJsonDumps) {
  NexmarkEvent e;
  e.kind = EventKind::kBid;
  e.bid.auction = 1;
  e.bid.bidder = -2;
  e.bid.price = 3;
  e.bid.channel = "a\"b\\c/d";
  e.bid.url = std::string_view("\n\t\x01\x7f", 4);
  e.bid.date_time = 0;
  e.bid.extra = "";
  std::string out;
  JsonFormatter().AppendEvent(e, &out);
  EXPECT_EQ(out,
            "{\"event_type\":2,\"person\":null,\"auction\":null,\"bid\":{\"auction\":1,"
            "\"bidder\":-2,\"price\":3,\"channel\":\"a\\\"b\\\\c/d\",\"url\":"
            "\"\\n\\t\\u0001\\u007f\",\"dateTime\":\"1970-01-01 00:00:00.000\",\"extra\":\"\"}}\n");
}

// Python's json.dumps(s) for ASCII s, written plainly.
std::string PythonDumps(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"')
      out += "\\\"";
    else if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\b')
      out += "\\b";
    else if (c == '\f')
      out += "\\f";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

TEST(NexmarkJsonTest, EscapesEverySpecialByteAtEveryPosition) {
  const std::string specials = std::string("\"\\\n\r\t\b\f\x01\x1f\x7f", 10) + '\0';
  NexmarkEvent e;
  e.kind = EventKind::kBid;
  for (char special : specials) {
    for (size_t len : {1, 2, 7, 15, 16, 17, 21, 31, 32, 33, 47}) {
      for (size_t pos = 0; pos < len; ++pos) {
        std::string s(len, 'x');
        s[pos] = special;
        e.bid.extra = s;
        std::string out;
        JsonFormatter().AppendEvent(e, &out);
        const std::string want = ",\"extra\":" + PythonDumps(s) + "}}\n";
        ASSERT_EQ(out.substr(out.size() - want.size()), want)
            << "byte " << static_cast<int>(special) << " at " << pos << " of " << len;
      }
    }
  }
}

TEST(NexmarkJsonTest, EmitJsonReportsErrors) {
  std::ostringstream os;
  NexmarkConfig bad;
  bad.events_per_second = 0;
  EXPECT_TRUE(EmitJson(bad, 0, 10, os).IsInvalidArgument());
  EXPECT_TRUE(EmitJson(NexmarkConfig{}, -1, 10, os).IsInvalidArgument());
  NexmarkConfig bounded;
  bounded.max_events = 100;
  EXPECT_TRUE(EmitJson(bounded, 95, 10, os).IsInvalidArgument());
  EXPECT_TRUE(EmitJson(bounded, 90, 10, os).ok());
  std::ostream broken(nullptr);  // every write fails
  EXPECT_TRUE(EmitJson(NexmarkConfig{}, 0, 10, broken).IsIOError());
}

TEST(NexmarkJsonTest, OffsetRangesConcatenate) {
  std::ostringstream whole, a, b;
  ASSERT_TRUE(EmitJson(NexmarkConfig{}, 0, 5000, whole).ok());
  ASSERT_TRUE(EmitJson(NexmarkConfig{}, 0, 1234, a).ok());
  ASSERT_TRUE(EmitJson(NexmarkConfig{}, 1234, 5000 - 1234, b).ok());
  EXPECT_EQ(whole.str(), a.str() + b.str());
}

}  // namespace
}  // namespace sluice::nexmark
