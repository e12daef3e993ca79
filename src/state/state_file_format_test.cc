#include "state/state_file_format.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "state/crc32c.h"

#include "state/state_paths.h"

namespace sluice::state {
namespace {

std::string SampleChangelog() {
  StateFileWriter w(StateFileKind::kChangelog, 7);
  w.Put("a", "1");
  w.Put(std::string("b\0c", 3), std::string(300, 'x'));
  w.Delete("a");
  w.Put("", "");  // empty key and value are legal
  return w.Finish(2);
}

TEST(StateFileFormatTest, ChangelogRoundTrip) {
  const std::string bytes = SampleChangelog();
  auto info = ValidateStateFile(bytes, "/cp/7.changelog", StateFileKind::kChangelog, 7);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->num_records, 4);
  EXPECT_EQ(info->num_keys_after, 2);
  std::vector<StateRecord> recs;
  ASSERT_TRUE(ForEachStateRecord(bytes, [&](const StateRecord& r) {
                recs.push_back(r);
                return Status::OK();
              }).ok());
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_FALSE(recs[0].is_delete);
  EXPECT_EQ(recs[0].key, "a");
  EXPECT_EQ(recs[0].value, "1");
  EXPECT_EQ(recs[1].key, std::string_view("b\0c", 3));
  EXPECT_EQ(recs[1].value.size(), 300u);
  EXPECT_TRUE(recs[2].is_delete);
  EXPECT_EQ(recs[2].key, "a");
  EXPECT_EQ(recs[3].key, "");
}

TEST(StateFileFormatTest, ExactHeaderBytes) {
  StateFileWriter w(StateFileKind::kSnapshot, 258);
  const std::string bytes = w.Finish(0);
  ASSERT_EQ(bytes.size(), kStateFileHeaderSize + kStateFileEndRecordSize);
  EXPECT_EQ(bytes.substr(0, 4), "SLSN");
  EXPECT_EQ(bytes[4], 1);
  EXPECT_EQ(bytes[5], 0);
  EXPECT_EQ(bytes[8], 2);  // 258 little-endian
  EXPECT_EQ(bytes[9], 1);
  EXPECT_EQ(bytes[kStateFileHeaderSize], 'E');
}

// The example of docs/formats/state.md, byte for byte (crcs computed).
TEST(StateFileFormatTest, ExampleFromTheFormatDoc) {
  StateFileWriter w(StateFileKind::kChangelog, 7);
  w.Put("a", "1");
  w.Delete("b");
  const std::string bytes = w.Finish(3);
  auto hex = [](std::string_view s) {
    std::string out;
    char buf[4];
    for (unsigned char c : s) {
      std::snprintf(buf, sizeof(buf), "%02X ", c);
      out += buf;
    }
    return out;
  };
  auto crc = [&](size_t from, size_t len) {
    uint32_t c = Crc32c(std::string_view(bytes).substr(from, len));
    std::string le(4, '\0');
    for (int i = 0; i < 4; ++i)
      le[static_cast<size_t>(i)] = static_cast<char>((c >> (8 * i)) & 0xFF);
    return hex(le);
  };
  const std::string expected = "53 4C 43 4C 01 00 00 00 07 00 00 00 00 00 00 00 " + crc(0, 16) +
                               "50 01 00 00 00 01 00 00 00 61 31 " + crc(20, 11) +
                               "44 01 00 00 00 62 " + crc(35, 6) +
                               "45 02 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00 " + crc(45, 17);
  EXPECT_EQ(hex(bytes), expected);
}

TEST(StateFileFormatTest, EveryTruncationIsCorruptionNamingTheFile) {
  const std::string bytes = SampleChangelog();
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto info =
        ValidateStateFile(bytes.substr(0, n), "/cp/7.changelog", StateFileKind::kChangelog, 7);
    ASSERT_FALSE(info.ok()) << n;
    EXPECT_TRUE(info.status().IsCorruption()) << n << ": " << info.status().ToString();
    EXPECT_NE(info.status().message().find("/cp/7.changelog"), std::string::npos);
  }
  auto torn = ValidateStateFile(bytes.substr(0, bytes.size() - 3), "/cp/7.changelog",
                                StateFileKind::kChangelog, 7);
  EXPECT_NE(torn.status().message().find("torn tail"), std::string::npos)
      << torn.status().ToString();
}

TEST(StateFileFormatTest, EveryFlippedByteIsDetected) {
  const std::string bytes = SampleChangelog();
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    auto info = ValidateStateFile(bad, "/cp/7.changelog", StateFileKind::kChangelog, 7);
    EXPECT_FALSE(info.ok()) << "flip at byte " << i << " went unnoticed";
  }
}

TEST(StateFileFormatTest, TrailingBytesWrongVersionWrongKind) {
  const std::string bytes = SampleChangelog();
  auto trailing = ValidateStateFile(bytes + "x", "f", StateFileKind::kChangelog, 7);
  EXPECT_TRUE(trailing.status().IsCorruption());
  EXPECT_NE(trailing.status().message().find("after the end record"), std::string::npos);
  auto version = ValidateStateFile(bytes, "f", StateFileKind::kChangelog, 8);
  EXPECT_TRUE(version.status().IsCorruption());
  EXPECT_NE(version.status().message().find("holds version 7"), std::string::npos);
  auto kind = ValidateStateFile(bytes, "f", StateFileKind::kSnapshot, 7);
  EXPECT_TRUE(kind.status().IsCorruption());
}

TEST(StateFileFormatTest, SnapshotRejectsDisorderAndDeletes) {
  StateFileWriter w(StateFileKind::kSnapshot, 3);
  w.Put("b", "1");
  w.Put("a", "2");
  auto info = ValidateStateFile(w.Finish(2), "s", StateFileKind::kSnapshot, 3);
  EXPECT_TRUE(info.status().IsCorruption());
  EXPECT_NE(info.status().message().find("out of order"), std::string::npos);
  // Unsigned byte order: 0x7f < 0x80.
  StateFileWriter ok(StateFileKind::kSnapshot, 3);
  ok.Put("\x7f", "");
  ok.Put("\x80", "");
  EXPECT_TRUE(ValidateStateFile(ok.Finish(2), "s", StateFileKind::kSnapshot, 3).ok());
}

TEST(StatePathsTest, ParseNames) {
  EXPECT_EQ(StateFileNameFor(StateFileKind::kChangelog, 12), "12.changelog");
  auto c = ParseStateFileName("12.changelog");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, StateFileKind::kChangelog);
  EXPECT_EQ(c->version, 12);
  auto s = ParseStateFileName("5.snapshot");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->kind, StateFileKind::kSnapshot);
  for (const char* bad :
       {"0.changelog", "012.changelog", "-1.changelog", "+1.changelog", ".12.changelog.abc.tmp",
        "12.delta", "x.snapshot", ".snapshot", "99999999999999999999.changelog", "_metadata"}) {
    EXPECT_FALSE(ParseStateFileName(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace sluice::state
