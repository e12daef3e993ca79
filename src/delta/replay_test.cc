// Replay rules (snapshot.h) and protocol checks (protocol_check.h), without files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/protocol_check.h"
#include "delta/snapshot.h"
#include "delta/time_travel.h"

namespace sluice::delta {
namespace {

using ::testing::HasSubstr;

const char* kSchema =
    R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]})";

Metadata Md(std::map<std::string, std::string> config = {}) {
  Metadata m;
  m.id = "t";
  m.schema_string = kSchema;
  m.configuration = std::move(config);
  return m;
}

AddFile Add(const std::string& path, int64_t mtime = 1) {
  AddFile a;
  a.path = path;
  a.size = 1;
  a.modification_time = mtime;
  return a;
}

RemoveFile Remove(const std::string& path) {
  RemoveFile r;
  r.path = path;
  r.deletion_timestamp = 2;
  return r;
}

LogSegment Seg(int64_t v) {
  LogSegment s;
  s.version = Version(v);
  return s;
}

std::vector<std::string> Paths(const Snapshot& s) {
  std::vector<std::string> out;
  for (const auto& f : s.files) out.push_back(f.path);
  return out;
}

TEST(ReplayTest, NewestActionPerPathWins) {
  LogReplay r;
  r.Apply({Protocol{}, Md(), Add("a"), Add("b")}, Version(0));
  r.Apply({Remove("a")}, Version(1));
  r.Apply({Add("a", 1700000000000), Add("c"), Remove("b")}, Version(2));
  auto s = r.Finish("/t", Seg(2), 0);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Paths(*s), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(s->files[0].modification_time, 1700000000000);
  ASSERT_EQ(s->tombstones.size(), 1u);
  EXPECT_EQ(s->tombstones[0].path, "b");
}

TEST(ReplayTest, LatestProtocolMetadataTxnWin) {
  LogReplay r;
  r.Apply({Protocol{}, Md(), SetTransaction{"app", 5, 1}, SetTransaction{"other", 1, 1}},
          Version(0));
  Metadata m2 = Md({{"k", "v"}});
  m2.partition_columns = {};
  r.Apply({m2, SetTransaction{"app", 3, 2}}, Version(1));  // txn versions may go down
  r.Apply({DomainMetadata{"d", "{}", false}}, Version(2));
  r.Apply({DomainMetadata{"d", "{}", true}, DomainMetadata{"e", "{}", false}}, Version(3));
  auto s = r.Finish("/t", Seg(3), 0);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->TxnVersion("app"), std::optional<int64_t>(3));
  EXPECT_EQ(s->TxnVersion("other"), std::optional<int64_t>(1));
  EXPECT_EQ(s->TxnVersion("none"), std::nullopt);
  EXPECT_EQ(s->metadata.Config("k"), "v");
  EXPECT_EQ(s->domain_metadata.size(), 1u);
  EXPECT_TRUE(s->domain_metadata.count("e"));
}

TEST(ReplayTest, CommitInfoOnlyFromLastCommit) {
  LogReplay r;
  CommitInfo ci;
  ci.operation = "WRITE";
  r.Apply({ci, Protocol{}, Md()}, Version(0));
  r.Apply({Add("x")}, Version(1));
  auto s = r.Finish("/t", Seg(1), 0);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->commit_info.has_value());
}

TEST(ReplayTest, FilesKeyedByPathAndDeletionVector) {
  LogReplay r;
  Protocol p{3, 7, std::vector<std::string>{}, std::vector<std::string>{}};
  r.Apply({p, Md(), Add("f")}, Version(0));
  RemoveFile rm = Remove("f");
  rm.deletion_vector = DeletionVector{"u", "abc", 1, 10, 2};
  r.Apply({rm}, Version(1));  // a different key: (f, uabc@1) does not remove (f, none)
  auto s = r.Finish("/t", Seg(1), 0);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Paths(*s), std::vector<std::string>{"f"});
  EXPECT_EQ(s->tombstones.size(), 1u);
}

TEST(ReplayTest, MissingProtocolOrMetadataIsCorruption) {
  LogReplay no_protocol;
  no_protocol.Apply({Md()}, Version(0));
  auto a = no_protocol.Finish("/t", Seg(0), 0);
  EXPECT_TRUE(a.status().IsCorruption());
  EXPECT_THAT(a.status().message(), HasSubstr("No protocol found"));
  LogReplay no_metadata;
  no_metadata.Apply({Protocol{}}, Version(0));
  auto b = no_metadata.Finish("/t", Seg(0), 0);
  EXPECT_TRUE(b.status().IsCorruption());
  EXPECT_THAT(b.status().message(), HasSubstr("No metadata found"));
}

TEST(ProtocolCheckTest, AcceptsAndRefuses) {
  EXPECT_TRUE(CheckReadSupported(Protocol{1, 2, {}, {}}, Md()).ok());
  EXPECT_TRUE(
      CheckReadSupported(Protocol{2, 5, {}, {}}, Md({{"delta.columnMapping.mode", "none"}})).ok());
  EXPECT_TRUE(CheckReadSupported(
                  Protocol{3, 7, std::vector<std::string>{}, std::vector<std::string>{}}, Md())
                  .ok());
  EXPECT_TRUE(
      CheckReadSupported(Protocol{3, 7, std::vector<std::string>{"vacuumProtocolCheck"}, {}}, Md())
          .ok());
  EXPECT_TRUE(
      CheckReadSupported(Protocol{3, 7, std::vector<std::string>{"columnMapping"}, {}}, Md()).ok());
  EXPECT_TRUE(
      CheckReadSupported(Protocol{3, 7, std::vector<std::string>{"deletionVectors"}, {}}, Md())
          .ok());

  auto refused = [](const Protocol& p, const Metadata& m) {
    Status st = CheckReadSupported(p, m);
    EXPECT_TRUE(st.IsNotSupported()) << st.ToString();
    return st.message();
  };
  EXPECT_THAT(refused(Protocol{99, 7, {}, {}}, Md()),
              HasSubstr("Unsupported Delta protocol reader version 99"));
  // Column mapping name and id are read (column_mapping.h); an unknown mode is refused.
  EXPECT_TRUE(
      CheckReadSupported(Protocol{2, 5, {}, {}}, Md({{"delta.columnMapping.mode", "name"}})).ok());
  EXPECT_TRUE(
      CheckReadSupported(Protocol{2, 5, {}, {}}, Md({{"delta.columnMapping.mode", "id"}})).ok());
  EXPECT_THAT(refused(Protocol{2, 5, {}, {}}, Md({{"delta.columnMapping.mode", "other"}})),
              HasSubstr("'other'"));
  for (const char* f : {"timestampNtz", "typeWidening", "typeWidening-preview", "v2Checkpoint"}) {
    EXPECT_TRUE(CheckReadSupported(Protocol{3, 7, std::vector<std::string>{f}, {}}, Md()).ok())
        << f;
  }
  for (const char* f : {"variantType", "catalogManaged", "blahabl"}) {
    EXPECT_THAT(refused(Protocol{3, 7, std::vector<std::string>{f}, {}}, Md()),
                HasSubstr(std::string("'") + f + "'"));
  }
  EXPECT_TRUE(CheckReadSupported(Protocol{3, 7, std::vector<std::string>{"columnMapping"}, {}},
                                 Md({{"delta.columnMapping.mode", "name"}}))
                  .ok());
}

TEST(TimeTravelTest, VersionAtTimestampRules) {
  std::vector<CommitTimestamp> commits = {
      {Version(0), 1000}, {Version(1), 2000}, {Version(2), 3000}};
  EXPECT_EQ(*VersionAtTimestamp(commits, 1000), Version(0));
  EXPECT_EQ(*VersionAtTimestamp(commits, 1999), Version(0));
  EXPECT_EQ(*VersionAtTimestamp(commits, 2000), Version(1));
  EXPECT_EQ(*VersionAtTimestamp(commits, 3000), Version(2));
  auto before = VersionAtTimestamp(commits, 999);
  EXPECT_THAT(before.status().message(), HasSubstr("before the earliest available version 0"));
  EXPECT_THAT(before.status().message(), HasSubstr("1970-01-01T00:00:00.999Z"));
  auto after = VersionAtTimestamp(commits, 3001);
  EXPECT_THAT(after.status().message(), HasSubstr("after the latest available version 2"));
}

TEST(TimeTravelTest, VersionRangeForTimestamps) {
  std::vector<CommitTimestamp> commits = {
      {Version(0), 1000}, {Version(1), 2000}, {Version(2), 3000}};
  auto all = *VersionRangeForTimestamps(commits, 0, std::nullopt);
  EXPECT_EQ(all.first, Version(0));
  EXPECT_EQ(all.second, Version(2));
  auto mid = *VersionRangeForTimestamps(commits, 1001, 2999);
  EXPECT_EQ(mid.first, Version(1));
  EXPECT_EQ(mid.second, Version(1));
  EXPECT_TRUE(VersionRangeForTimestamps(commits, 3001, std::nullopt).status().IsNotFound());
  EXPECT_TRUE(VersionRangeForTimestamps(commits, 0, 999).status().IsNotFound());
  EXPECT_TRUE(VersionRangeForTimestamps(commits, 1500, 1600).status().IsInvalidArgument());
}

}  // namespace
}  // namespace sluice::delta
