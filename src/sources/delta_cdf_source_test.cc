#include "sources/delta_cdf_source.h"

#include <gmock/gmock.h>

#include "sources/delta_source.h"
#include "sources/delta_test_util.h"
#include "sources/source_factory.h"

namespace sluice::sources {
namespace {

using ::testing::HasSubstr;

using testing::Sorted;

class DeltaCdfSourceTest : public testing::DeltaSourceTestBase {
 protected:
  std::unique_ptr<Source> Open(std::map<std::string, std::string> options) {
    options["path"] = table_;
    auto s = CreateSource("delta_cdf", Ctx(ckpt_, options));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? s.MoveValueUnsafe() : nullptr;
  }
  // Rows without _commit_timestamp (the last column).
  std::vector<std::string> Changes(Source* s, const std::optional<OffsetJson>& start,
                                   const OffsetJson& end) {
    auto b = s->GetBatch(start, end);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    if (!b.ok()) return {"<error>"};
    std::vector<std::string> out;
    for (int64_t r = 0; r < b->num_rows(); ++r) {
      std::string line;
      for (size_t c = 0; c + 1 < b->num_columns(); ++c)
        line += (c ? "|" : "") + b->GetString(r, c).value_or("NULL");
      EXPECT_TRUE(b->GetString(r, b->num_columns() - 1).has_value());
      out.push_back(line);
    }
    return Sorted(out);
  }
  static int64_t Version(const std::optional<OffsetJson>& json) {
    auto o = DeltaSourceOffset::Parse(json.value_or(""));
    EXPECT_TRUE(o.ok());
    return o.ok() ? o->reservoir_version : -1;
  }
  void MakeTable() {
    Append("SELECT 1::BIGINT AS id UNION ALL SELECT 2", false,
           {{"delta.enableChangeDataFeed", "true"}});      // v0
    Append("SELECT 3::BIGINT AS id");                      // v1
    Append("SELECT 9::BIGINT AS id", /*overwrite=*/true);  // v2
  }
};

TEST_F(DeltaCdfSourceTest, StreamsChangesCommitByCommit) {
  MakeTable();
  auto src = Open({{"startingVersion", "0"}, {"maxFilesPerTrigger", "1"}});
  ASSERT_NE(src, nullptr);
  ASSERT_EQ(src->schema().size(), 4u);
  EXPECT_EQ(src->schema()[1].name, "_change_type");
  auto o1 = Latest(src.get(), std::nullopt);
  EXPECT_EQ(Version(o1), 1);
  EXPECT_NE(o1->find("\"index\":-1"), std::string::npos);
  EXPECT_EQ(Changes(src.get(), std::nullopt, *o1),
            (std::vector<std::string>{"1|insert|0", "2|insert|0"}));
  auto o2 = Latest(src.get(), o1);
  EXPECT_EQ(Version(o2), 2);
  EXPECT_EQ(Changes(src.get(), o1, *o2), (std::vector<std::string>{"3|insert|1"}));
  auto o3 = Latest(src.get(), o2);  // the overwrite: two removed files and one added, one commit
  EXPECT_EQ(Version(o3), 3);
  EXPECT_EQ(Changes(src.get(), o2, *o3),
            (std::vector<std::string>{"1|delete|2", "2|delete|2", "3|delete|2", "9|insert|2"}));
  EXPECT_EQ(Latest(src.get(), o3), o3);

  // Without a limit everything comes in one batch; a new source over the checkpoint agrees.
  auto again = Open({{"startingVersion", "0"}});
  auto all = Latest(again.get(), std::nullopt);
  EXPECT_EQ(Version(all), 3);
  EXPECT_EQ(Changes(again.get(), std::nullopt, *o1), Changes(src.get(), std::nullopt, *o1));
  EXPECT_EQ(Changes(again.get(), std::nullopt, *all).size(), 7u);
  EXPECT_EQ(Changes(again.get(), o3, *o3).size(), 0u);
}

TEST_F(DeltaCdfSourceTest, SchemaChangeThatAddsColumnsIsTaggedAdditive) {
  MakeTable();
  auto src = Open({{"startingVersion", "0"}});
  ASSERT_NE(src, nullptr);
  auto o1 = Latest(src.get(), std::nullopt);
  ASSERT_EQ(Version(o1), 3);
  delta::WriteOptions add;
  add.merge_schema = true;
  ASSERT_TRUE(Writer()->Write(Sql("SELECT 4::BIGINT AS id, 'x' AS extra"), add).ok());
  auto o2 = Latest(src.get(), o1);
  auto batch = src->GetBatch(o1, *o2);
  ASSERT_FALSE(batch.ok());
  EXPECT_THAT(batch.status().message(), HasSubstr("detected a schema change in versions 3..3"));
  EXPECT_THAT(batch.status().message(), HasSubstr(kAdditiveSchemaChangeTag));
  // A source opened after the change reads the new schema and continues.
  auto after = Open({{"startingVersion", "3"}});
  ASSERT_NE(after, nullptr);
  auto rows = after->GetBatch(o1, *o2);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->num_rows(), 1);
}

TEST_F(DeltaCdfSourceTest, StartingVersionAfterLatestWaitsAndErrorsAreClear) {
  MakeTable();
  auto src = Open({{"startingVersion", "3"}});
  EXPECT_EQ(Latest(src.get(), std::nullopt), std::nullopt);
  Append("SELECT 10::BIGINT AS id");  // v3
  auto o = Latest(src.get(), std::nullopt);
  EXPECT_EQ(Changes(src.get(), std::nullopt, *o), (std::vector<std::string>{"10|insert|3"}));

  auto both = CreateSource("delta_cdf", Ctx(ckpt_, {{"path", table_},
                                                    {"startingVersion", "0"},
                                                    {"startingTimestamp", "2020-01-01"}}));
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(both.status().message(), HasSubstr("exclude each other"));
  auto bad = CreateSource("delta_cdf", Ctx(ckpt_, {{"path", table_}, {"startingVersion", "-1"}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'startingVersion' must be >= 0"), std::string::npos);
}

// Without a starting option: the snapshot at the latest version as inserts of that version
// (Spark 4.2 / Delta 4.4: _commit_version = the snapshot's version, _commit_timestamp = its
// commit timestamp; with maxFilesPerTrigger=1 the offsets {S, 0, true}, {S, 1, true}, ...,
// {S + 1, -1, false}), then the changes after it.
TEST_F(DeltaCdfSourceTest, WithoutAStartingVersionTheSnapshotComesFirstAsInserts) {
  MakeTable();                        // v2 holds the single file of the overwrite (id 9)
  Append("SELECT 10::BIGINT AS id");  // v3: a second file
  auto src = Open({{"maxFilesPerTrigger", "1"}});
  ASSERT_NE(src, nullptr);
  auto o1 = Latest(src.get(), std::nullopt);
  ASSERT_TRUE(o1.has_value());
  EXPECT_THAT(*o1, HasSubstr("\"reservoirVersion\":3,\"index\":0,\"isStartingVersion\":true"));
  auto o2 = Latest(src.get(), o1);
  ASSERT_TRUE(o2.has_value());
  EXPECT_THAT(*o2, HasSubstr("\"reservoirVersion\":4,\"index\":-1,\"isStartingVersion\":false"));
  std::vector<std::string> rows = Changes(src.get(), std::nullopt, *o1);
  std::vector<std::string> more = Changes(src.get(), o1, *o2);
  rows.insert(rows.end(), more.begin(), more.end());
  EXPECT_EQ(Sorted(rows), (std::vector<std::string>{"10|insert|3", "9|insert|3"}));
  // The snapshot's commit timestamp is version 3's, as the change feed of version 3 has it.
  auto snap = src->GetBatch(o1, *o2);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  auto v3 =
      CreateSource("delta_cdf", Ctx(ckpt_ + "-v3", {{"path", table_}, {"startingVersion", "3"}}));
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  auto v3_end = Latest(v3->get(), std::nullopt);
  ASSERT_TRUE(v3_end.has_value());
  auto feed = (*v3)->GetBatch(std::nullopt, *v3_end);
  ASSERT_TRUE(feed.ok()) << feed.status().ToString();
  ASSERT_EQ(feed->num_rows(), 1);
  EXPECT_EQ(feed->GetString(0, 1), "insert");
  EXPECT_EQ(snap->GetString(0, 3), feed->GetString(0, 3));
  EXPECT_EQ(Latest(src.get(), o2), o2);  // nothing after the snapshot yet
  Append("SELECT 11::BIGINT AS id");     // v4
  auto o3 = Latest(src.get(), o2);
  EXPECT_EQ(Changes(src.get(), o2, *o3), (std::vector<std::string>{"11|insert|4"}));
  // Without a limit the snapshot is one batch; a source over the same checkpoint keeps the
  // snapshot's version (persisted in delta_start).
  auto again = Open({});
  auto all = Latest(again.get(), std::nullopt);
  EXPECT_THAT(*all, HasSubstr("\"reservoirVersion\":4,\"index\":-1"));
  EXPECT_EQ(Changes(again.get(), std::nullopt, *all),
            (std::vector<std::string>{"10|insert|3", "9|insert|3"}));
}

TEST_F(DeltaCdfSourceTest, TableWithoutChangeFeedFailsWithReaderError) {
  Append("SELECT 1::BIGINT AS id");
  auto src = Open({{"startingVersion", "0"}});
  auto o = Latest(src.get(), std::nullopt);
  auto b = src->GetBatch(std::nullopt, *o);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("change data was not recorded"), std::string::npos)
      << b.status().ToString();
}

}  // namespace
}  // namespace sluice::sources
