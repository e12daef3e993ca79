#include "sources/delta_source.h"

#include <nlohmann/json.hpp>

#include "sources/delta_test_util.h"
#include "sources/source_factory.h"

namespace sluice::sources {
namespace {

using testing::Sorted;

class DeltaSourceTest : public testing::DeltaSourceTestBase {
 protected:
  std::unique_ptr<Source> Open(std::map<std::string, std::string> options = {}) {
    options["path"] = table_;
    auto s = CreateSource("delta", Ctx(ckpt_, options));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? s.MoveValueUnsafe() : nullptr;
  }
  static DeltaSourceOffset Off(const std::optional<OffsetJson>& json) {
    auto o = DeltaSourceOffset::Parse(json.value_or("null"));
    EXPECT_TRUE(o.ok()) << o.status().ToString();
    return o.ok() ? *o : DeltaSourceOffset{};
  }
  static ReadLimit Files(int64_t n) {
    ReadLimit l;
    l.max_files = n;
    return l;
  }
};

TEST_F(DeltaSourceTest, OffsetJsonRoundTripsInSparkShape) {
  DeltaSourceOffset o{"abc", 3, -1, true};
  EXPECT_EQ(o.ToJson(),
            "{\"sourceVersion\":1,\"reservoirId\":\"abc\",\"reservoirVersion\":3,\"index\":-1,"
            "\"isStartingVersion\":true}");
  EXPECT_EQ(*DeltaSourceOffset::Parse(o.ToJson()), o);
  EXPECT_TRUE(DeltaSourceOffset::Parse("{\"logOffset\":1}").status().IsCorruption());
  EXPECT_TRUE(
      DeltaSourceOffset::Parse("{\"sourceVersion\":9,\"reservoirId\":\"a\",\"reservoirVersion\":1,"
                               "\"index\":0,\"isStartingVersion\":false}")
          .status()
          .IsNotSupported());
}

TEST_F(DeltaSourceTest, StartingSnapshotThenNewCommitsRespectingMaxFiles) {
  Append("SELECT 1::BIGINT AS id");  // v0 (creates the table)
  Append("SELECT 2::BIGINT AS id");  // v1
  Append("SELECT 3::BIGINT AS id");  // v2
  auto src = Open();
  ASSERT_NE(src, nullptr);
  auto o1 = Latest(src.get(), std::nullopt, Files(2));
  EXPECT_EQ(Off(o1).reservoir_version, 2);
  EXPECT_EQ(Off(o1).index, 1);
  EXPECT_TRUE(Off(o1).is_starting_version);
  auto o2 = Latest(src.get(), o1, Files(2));
  EXPECT_EQ(Off(o2).index, 2);
  EXPECT_TRUE(Off(o2).is_starting_version);
  EXPECT_EQ(Latest(src.get(), o2, Files(2)), o2);  // nothing new
  auto b1 = Get(src.get(), std::nullopt, *o1);
  auto b2 = Get(src.get(), o1, *o2);
  EXPECT_EQ(b1.size(), 2u);
  EXPECT_EQ(b2.size(), 1u);
  std::vector<std::string> all = b1;
  all.insert(all.end(), b2.begin(), b2.end());
  EXPECT_EQ(Sorted(all), (std::vector<std::string>{"1", "2", "3"}));

  Append("SELECT 4::BIGINT AS id UNION ALL SELECT 5");  // v3
  Append("SELECT 6::BIGINT AS id");                     // v4
  auto o3 = Latest(src.get(), o2, Files(1));
  EXPECT_EQ(Off(o3).reservoir_version, 3);
  EXPECT_EQ(Off(o3).index, 0);
  EXPECT_FALSE(Off(o3).is_starting_version);
  EXPECT_EQ(Sorted(Get(src.get(), o2, *o3)), (std::vector<std::string>{"4", "5"}));
  auto o4 = Latest(src.get(), o3, {});
  EXPECT_EQ(Off(o4).reservoir_version, 4);
  EXPECT_EQ(Get(src.get(), o3, *o4), std::vector<std::string>{"6"});
  EXPECT_EQ(src->Metrics(o4).at("numFilesOutstanding"), "0");

  // Determinism: the same ranges again, and from a new source over the same checkpoint.
  EXPECT_EQ(Get(src.get(), std::nullopt, *o1), b1);
  auto again = Open();
  EXPECT_EQ(Get(again.get(), std::nullopt, *o1), b1);
  EXPECT_EQ(Get(again.get(), o1, *o2), b2);
  EXPECT_EQ(Sorted(Get(again.get(), o2, *o3)), (std::vector<std::string>{"4", "5"}));
  // A crash before offsets/0 was written: the restarted source starts at the same snapshot.
  EXPECT_EQ(Off(Latest(again.get(), std::nullopt, Files(2))).reservoir_version, 2);
}

TEST_F(DeltaSourceTest, MaxBytesIsSoftAndDefaultMaxFilesIs1000) {
  Append("SELECT 1::BIGINT AS id");
  Append("SELECT 2::BIGINT AS id");
  Append("SELECT 3::BIGINT AS id");
  auto src = Open({{"maxBytesPerTrigger", "1"}});
  auto o1 = Latest(src.get(), std::nullopt);
  EXPECT_EQ(Off(o1).index, 0);  // one file even though it is larger than 1 byte
  EXPECT_EQ(src->Metrics(o1).at("numFilesOutstanding"), "2");
  ReadLimit all;
  all.all_available = true;
  EXPECT_EQ(Off(Latest(src.get(), o1, all)).index, 2);
  auto dflt = Open();
  EXPECT_EQ(Off(Latest(dflt.get(), std::nullopt)).index, 2);
  auto by_option = Open({{"maxFilesPerTrigger", "1"}});
  EXPECT_EQ(Off(Latest(by_option.get(), std::nullopt)).index, 0);
  EXPECT_EQ(Off(Latest(by_option.get(), std::nullopt, Files(2))).index,
            1);  // the loop's limit wins
}

TEST_F(DeltaSourceTest, StartingVersionReadsCommitsFromThatVersion) {
  Append("SELECT 1::BIGINT AS id");
  Append("SELECT 2::BIGINT AS id");
  Append("SELECT 3::BIGINT AS id");
  auto src = Open({{"startingVersion", "1"}});
  auto o = Latest(src.get(), std::nullopt);
  EXPECT_FALSE(Off(o).is_starting_version);
  EXPECT_EQ(Off(o).reservoir_version, 2);
  EXPECT_EQ(Sorted(Get(src.get(), std::nullopt, *o)), (std::vector<std::string>{"2", "3"}));

  testing::TempDir other;
  auto ctx = Ctx(other.path() + "/s0", {{"path", table_}, {"startingVersion", "latest"}});
  auto latest = CreateSource("delta", ctx);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(Latest(latest->get(), std::nullopt), std::nullopt);
  Append("SELECT 4::BIGINT AS id");
  auto o2 = Latest(latest->get(), std::nullopt);
  EXPECT_EQ(Get(latest->get(), std::nullopt, *o2), std::vector<std::string>{"4"});

  auto bad = CreateSource("delta", Ctx(ckpt_, {{"path", table_}, {"startingVersion", "abc"}}));
  EXPECT_TRUE(bad.status().IsInvalidArgument());
  EXPECT_NE(bad.status().message().find("startingVersion"), std::string::npos);
}

TEST_F(DeltaSourceTest, ZeroRowInsertRunsAZeroRowBatch) {
  Append("SELECT 1::BIGINT AS id");
  auto src = Open();
  auto o1 = Latest(src.get(), std::nullopt);
  Append("SELECT 1::BIGINT AS id WHERE false");  // a commit without files
  auto o2 = Latest(src.get(), o1);
  ASSERT_NE(o2, o1);
  EXPECT_EQ(Off(o2).reservoir_version, 1);
  EXPECT_EQ(Off(o2).index, -1);
  auto batch = src->GetBatch(o1, *o2);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_EQ(batch->num_rows(), 0);
  EXPECT_EQ(batch->schema().size(), 1u);
  EXPECT_EQ(Latest(src.get(), o2), o2);  // the empty commit is delivered once
}

TEST_F(DeltaSourceTest, DataUpdateStopsTheStreamUnlessSkipChangeCommits) {
  Append("SELECT 1::BIGINT AS id");
  auto src = Open();
  auto o1 = Latest(src.get(), std::nullopt);
  Append("SELECT 2::BIGINT AS id");                      // v1
  Append("SELECT 9::BIGINT AS id", /*overwrite=*/true);  // v2: removes with dataChange=true
  Append("SELECT 10::BIGINT AS id");                     // v3
  auto o2 = Latest(src.get(), o1);  // v1 is delivered before the failing commit
  EXPECT_EQ(Off(o2).reservoir_version, 1);
  auto err = src->LatestOffset(o2, {});
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.status().message().find("Detected a data update (for example "), std::string::npos);
  EXPECT_NE(err.status().message().find(
                "in the source table at version 2. This is currently not supported. "
                "If this is going to happen regularly and you are okay to skip changes, set the "
                "option 'skipChangeCommits' to 'true'"),
            std::string::npos)
      << err.status().message();

  auto skip = Open({{"skipChangeCommits", "true"}});
  auto s2 = Latest(skip.get(), o2);
  EXPECT_EQ(Off(s2).reservoir_version, 3);
  EXPECT_EQ(Get(skip.get(), o2, *s2), std::vector<std::string>{"10"});
}

TEST_F(DeltaSourceTest, DataChangeFalseCommitsAreSkipped) {
  Append("SELECT 1::BIGINT AS id");
  auto src = Open();
  auto o1 = Latest(src.get(), std::nullopt);
  RearrangeCommit(0, 1);
  EXPECT_EQ(Latest(src.get(), o1), o1);  // no batch for OPTIMIZE
  Append("SELECT 2::BIGINT AS id");      // v2
  auto o2 = Latest(src.get(), o1);
  EXPECT_EQ(Off(o2).reservoir_version, 2);
  EXPECT_EQ(Get(src.get(), o1, *o2), std::vector<std::string>{"2"});
}

TEST_F(DeltaSourceTest, SchemaChangeStopsAndAdditiveChangeContinuesAfterRestart) {
  Append("SELECT 1::BIGINT AS id");
  auto src = Open();
  auto o1 = Latest(src.get(), std::nullopt);
  engine::DataType varchar;
  varchar.id = engine::TypeId::kVarchar;
  ASSERT_TRUE(Writer()->AddColumns({engine::Field{"name", varchar, true}}).ok());  // v1
  Append("SELECT 2::BIGINT AS id, 'b' AS name");                                   // v2
  auto err = src->LatestOffset(o1, {});
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.status().message().find("schema change at version 1"), std::string::npos)
      << err.status().message();
  EXPECT_NE(err.status().message().find("(id BIGINT)"), std::string::npos);
  EXPECT_NE(err.status().message().find("(id BIGINT, name VARCHAR)"), std::string::npos);
  // Only columns were added: the error says so (supervisors restart on it).
  EXPECT_NE(err.status().message().find(kAdditiveSchemaChangeTag), std::string::npos);

  auto restarted = Open();
  ASSERT_EQ(restarted->schema().size(), 2u);
  auto o2 = Latest(restarted.get(), o1);
  EXPECT_EQ(Off(o2).reservoir_version, 2);
  EXPECT_EQ(Get(restarted.get(), o1, *o2), std::vector<std::string>{"2|b"});
  // The first batch re-read with the new schema: the old file has no `name`.
  EXPECT_EQ(Get(restarted.get(), std::nullopt, *o1), std::vector<std::string>{"1|NULL"});
}

TEST_F(DeltaSourceTest, ReservoirIdMismatchNeedsNewCheckpoint) {
  Append("SELECT 1::BIGINT AS id");
  auto src = Open();
  DeltaSourceOffset foreign{"another-table", 0, 0, true};
  auto r = src->LatestOffset(foreign.ToJson(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a new checkpoint is needed"), std::string::npos);
  EXPECT_NE(r.status().message().find("another-table"), std::string::npos);
  EXPECT_FALSE(src->GetBatch(std::nullopt, foreign.ToJson()).ok());
}

TEST_F(DeltaSourceTest, AvailableNowStopsAtTheVersionSeenAtPrepare) {
  Append("SELECT 1::BIGINT AS id");
  Append("SELECT 2::BIGINT AS id");
  auto src = Open({{"startingVersion", "0"}});
  ASSERT_TRUE(src->PrepareForAvailableNow().ok());
  Append("SELECT 3::BIGINT AS id");
  auto o1 = Latest(src.get(), std::nullopt, Files(1));
  auto o2 = Latest(src.get(), o1, Files(1));
  EXPECT_EQ(Off(o2).reservoir_version, 1);
  EXPECT_EQ(Latest(src.get(), o2, Files(1)), o2);
}

TEST_F(DeltaSourceTest, MissingTableIsNotFound) {
  auto s = CreateSource("delta", Ctx(ckpt_, {{"path", dir_.path() + "/nope"}}));
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.status().IsNotFound()) << s.status().ToString();
  EXPECT_NE(s.status().message().find("DeltaSource["), std::string::npos);
}

}  // namespace
}  // namespace sluice::sources

namespace sluice::sources {
namespace {

class DeltaSourceStartTest : public testing::DeltaSourceTestBase {};

TEST_F(DeltaSourceStartTest, StartingTimestampPicksFirstCommitAtOrAfterIt) {
  Append("SELECT 1::BIGINT AS id");
  Append("SELECT 2::BIGINT AS id");
  Append("SELECT 3::BIGINT AS id");
  auto fs = fs::LocalFileSystem();
  for (int v = 0; v < 3; ++v) {
    ASSERT_TRUE(fs->SetModificationTime(table_ + "/_delta_log/" + delta::CommitFileName(Version(v)),
                                        1'700'000'000'000 + v * 60'000)
                    .ok());
  }
  // 2023-11-14 22:14:00 UTC is 1 700 000 040 000: the first commit at or after it is version 1.
  auto s = CreateSource(
      "delta", Ctx(ckpt_, {{"path", table_}, {"startingTimestamp", "2023-11-14 22:14:00"}}));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto o = Latest(s->get(), std::nullopt);
  EXPECT_EQ(Sorted(Get(s->get(), std::nullopt, *o)), (std::vector<std::string>{"2", "3"}));
  // The resolved start is persisted: a restart after more commits re-reads the same batch 0.
  auto start = fs->ReadFile(ckpt_ + "/delta_start");
  ASSERT_TRUE(start.ok());
  EXPECT_NE(start->find("\"version\":1"), std::string::npos) << *start;
  auto both = CreateSource("delta", Ctx(ckpt_, {{"path", table_},
                                                {"startingVersion", "1"},
                                                {"startingTimestamp", "2023-11-14 22:14:00"}}));
  EXPECT_FALSE(both.ok());
}

}  // namespace
}  // namespace sluice::sources

namespace sluice::sources {
namespace {

class DeltaSourcePartitionTest : public testing::DeltaSourceTestBase {};

TEST_F(DeltaSourcePartitionTest, PartitionValuesComeFromTheLog) {
  delta::WriteOptions o;
  o.partition_by = {"day"};
  auto r =
      Writer()->Write(Sql("SELECT 1::BIGINT AS id, 'mon' AS day UNION ALL SELECT 2, 'tue'"), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto s = CreateSource("delta", Ctx(ckpt_, {{"path", table_}}));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto off = Latest(s->get(), std::nullopt);
  EXPECT_EQ(Sorted(Get(s->get(), std::nullopt, *off)),
            (std::vector<std::string>{"1|mon", "2|tue"}));
  EXPECT_TRUE((*s)->Commit(*off).ok());
  EXPECT_EQ(Sorted(Get(s->get(), std::nullopt, *off)),
            (std::vector<std::string>{"1|mon", "2|tue"}));
}

}  // namespace
}  // namespace sluice::sources
