// DeltaSource with a schema log (option schemaTrackingLocation; delta_source.h): the runs of
// test/interop/delta/spark_schema_tracking_probe{,2}.py, each run a new source over the same
// checkpoint (a restart), driven as the micro-batch loop does (the commit log is written
// before the source's Commit). What Spark answered for each run is in docs/delta.md.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/schema.h"
#include "sources/delta_schema_log.h"
#include "sources/delta_source.h"
#include "sources/delta_test_util.h"
#include "sources/source_factory.h"

namespace sluice::sources {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kEvolution = "DELTA_STREAMING_METADATA_EVOLUTION";
constexpr const char* kCannotContinue =
    "DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION";

class DeltaSourceSchemaLogTest : public testing::DeltaSourceTestBase {
 protected:
  struct Run {
    Status status;
    std::vector<std::string> rows;
    std::vector<std::string> columns;  // the source's schema
  };

  // Version 0: (id, s, t) with rows 1, 2, column mapping mode name.
  void CreateTable() {
    Append("SELECT 1::BIGINT AS id, 'a' AS s, 'x' AS t UNION ALL SELECT 2, 'b', 'y'", false,
           {{"delta.columnMapping.mode", "name"}});
  }

  // A restart: a new source over the checkpoint, batches until nothing is new or an error.
  // With `crash_before_commit`, the first batch that ends at a schema change is committed to
  // the (simulated) commit log but the source's Commit never runs.
  Run RunStream(std::map<std::string, std::string> options = {}, bool crash_before_commit = false) {
    options["path"] = table_;
    if (options.count("schemaTrackingLocation") == 0)
      options["schemaTrackingLocation"] = "_schema_log";
    Run run;
    auto src = CreateSource("delta", Ctx(ckpt_, options));
    if (!src.ok()) {
      run.status = src.status();
      return run;
    }
    for (const engine::Field& f : (*src)->schema()) run.columns.push_back(f.name);
    ReadLimit all;
    all.all_available = true;
    for (int batch = 0; batch < 20; ++batch) {
      auto end = (*src)->LatestOffset(committed_, all);
      if (!end.ok()) {
        run.status = end.status();
        return run;
      }
      if (!*end || *end == committed_) return run;
      auto rows = (*src)->GetBatch(committed_, **end);
      if (!rows.ok()) {
        run.status = rows.status();
        return run;
      }
      for (const std::string& r : testing::Rows(*rows)) run.rows.push_back(r);
      committed_ = *end;
      if (crash_before_commit && DeltaSourceOffset::Parse(**end)->AtMetadataChange()) return run;
      run.status = (*src)->Commit(**end);
      if (!run.status.ok()) return run;
    }
    ADD_FAILURE() << "more than 20 batches";
    return run;
  }

  DeltaSchemaLog Log() {
    auto snap = delta::DeltaTable::Open(fs::LocalFileSystem(), engine_, table_);
    EXPECT_TRUE(snap.ok());
    auto latest = (*snap)->Latest();
    EXPECT_TRUE(latest.ok());
    return DeltaSchemaLog(fs::LocalFileSystem(), dir_.path() + "/ckpt/_schema_log",
                          (*latest)->metadata.id);
  }
  // The newest entry: (index, version, column names).
  std::tuple<int64_t, int64_t, std::vector<std::string>> Newest() {
    auto latest = Log().Latest();
    EXPECT_TRUE(latest.ok() && latest->has_value());
    if (!latest.ok() || !latest->has_value()) return {-1, -1, {}};
    std::vector<std::string> names;
    auto schema = delta::ParseSchemaString((*latest)->second.data_schema_json);
    EXPECT_TRUE(schema.ok());
    for (const auto& f : schema->fields) names.push_back(f.name);
    return {(*latest)->first, (*latest)->second.delta_commit_version, names};
  }

  std::optional<OffsetJson> committed_;
};

using Names = std::vector<std::string>;
using Rows = std::vector<std::string>;

TEST_F(DeltaSourceSchemaLogTest, RenameStopsThenContinuesOnlyWhenUnblocked) {
  CreateTable();
  Run first = RunStream();
  ASSERT_TRUE(first.status.ok()) << first.status.ToString();
  EXPECT_EQ(testing::Sorted(first.rows), (Rows{"1|a|x", "2|b|y"}));
  EXPECT_EQ(Newest(), std::make_tuple(int64_t{0}, int64_t{0}, Names{"id", "s", "t"}));

  ASSERT_TRUE(Writer()->RenameColumn({"s"}, "s2").ok());  // v1
  Append("SELECT 3::BIGINT AS id, 'c' AS s2, 'z' AS t");  // v2
  Run stopped = RunStream();
  EXPECT_THAT(stopped.status.message(), HasSubstr(kEvolution));
  EXPECT_THAT(stopped.status.message(),
              HasSubstr("Updated schema: (id BIGINT, s2 VARCHAR, t VARCHAR)"));
  EXPECT_THAT(stopped.status.message(), Not(HasSubstr(kAdditiveSchemaChangeTag)));
  EXPECT_TRUE(stopped.rows.empty());  // the barrier's batch has no rows
  EXPECT_EQ(stopped.columns, (Names{"id", "s", "t"}));
  EXPECT_EQ(DeltaSourceOffset::Parse(*committed_)->index, DeltaSourceOffset::kMetadataChangeIndex);
  EXPECT_THAT(*committed_, HasSubstr("\"sourceVersion\":3"));  // as Delta writes it
  EXPECT_EQ(Newest(), std::make_tuple(int64_t{1}, int64_t{1}, Names{"id", "s2", "t"}));

  // Not unblocked: by no option, by the other option, by another version.
  for (const auto& options : std::vector<std::map<std::string, std::string>>{
           {}, {{"allowSourceColumnDrop", "always"}}, {{"allowSourceColumnRename", "2"}}}) {
    Run blocked = RunStream(options);
    EXPECT_THAT(blocked.status.message(), HasSubstr(kCannotContinue));
    EXPECT_THAT(blocked.status.message(),
                HasSubstr("(RENAME COLUMN) between Delta version 0 and 1"));
    EXPECT_THAT(blocked.status.message(), HasSubstr("'s' -> 's2'"));
    EXPECT_THAT(blocked.status.message(), HasSubstr(".option(\"allowSourceColumnRename\", \"1\")"));
    EXPECT_THAT(blocked.status.message(), Not(HasSubstr("allowSourceColumnDrop\"")));
    EXPECT_TRUE(blocked.rows.empty());
  }
  Run unblocked = RunStream({{"allowSourceColumnRename", "1"}});
  ASSERT_TRUE(unblocked.status.ok()) << unblocked.status.ToString();
  EXPECT_EQ(unblocked.columns, (Names{"id", "s2", "t"}));
  EXPECT_EQ(unblocked.rows, (Rows{"3|c|z"}));

  // The check stays until the next schema change (Spark: "append, no option" fails too).
  Append("SELECT 4::BIGINT AS id, 'd' AS s2, 'w' AS t");
  EXPECT_THAT(RunStream().status.message(), HasSubstr(kCannotContinue));
  Run always = RunStream({{"allowSourceColumnRename", "ALWAYS"}});
  ASSERT_TRUE(always.status.ok()) << always.status.ToString();
  EXPECT_EQ(always.rows, (Rows{"4|d|w"}));
  EXPECT_EQ(std::get<0>(Newest()), 1);  // no new entry without a schema change
}

TEST_F(DeltaSourceSchemaLogTest, ConsecutiveRenameAndDropAreMergedIntoOneEntry) {
  CreateTable();
  ASSERT_TRUE(RunStream().status.ok());
  ASSERT_TRUE(Writer()->RenameColumn({"s"}, "s2").ok());  // v1
  ASSERT_TRUE(Writer()->DropColumns({{"t"}}).ok());       // v2, no data between
  Append("SELECT 3::BIGINT AS id, 'c' AS s2");            // v3
  Run stopped = RunStream();
  EXPECT_THAT(stopped.status.message(), HasSubstr(kEvolution));
  EXPECT_EQ(Newest(), std::make_tuple(int64_t{1}, int64_t{1}, Names{"id", "s2", "t"}));
  // The restart merges the drop (entry 2, after entry 0) and asks for both unblocks.
  Run blocked = RunStream({{"allowSourceColumnRename", "always"}});
  EXPECT_THAT(blocked.status.message(), HasSubstr(kCannotContinue));
  EXPECT_THAT(blocked.status.message(),
              HasSubstr("(RENAME AND DROP COLUMN) between Delta version 0 and 2"));
  EXPECT_THAT(blocked.status.message(), HasSubstr("columns dropped: 't';"));
  EXPECT_THAT(
      blocked.status.message(),
      HasSubstr(
          ".option(\"allowSourceColumnRename\", \"2\").option(\"allowSourceColumnDrop\", \"2\")"));
  EXPECT_EQ(Newest(), std::make_tuple(int64_t{2}, int64_t{2}, Names{"id", "s2"}));
  auto merged = Log().Get(2);
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->previous_metadata_seq_num, std::optional<int64_t>(0));
  Run both = RunStream({{"allowSourceColumnRename", "always"}, {"allowSourceColumnDrop", "2"}});
  ASSERT_TRUE(both.status.ok()) << both.status.ToString();
  EXPECT_EQ(both.columns, (Names{"id", "s2"}));
  EXPECT_EQ(both.rows, (Rows{"3|c"}));
}

TEST_F(DeltaSourceSchemaLogTest, DropNeedsItsOwnUnblock) {
  CreateTable();
  ASSERT_TRUE(RunStream().status.ok());
  ASSERT_TRUE(Writer()->DropColumns({{"t"}}).ok());  // v1
  Append("SELECT 3::BIGINT AS id, 'c' AS s");        // v2
  EXPECT_THAT(RunStream().status.message(), HasSubstr(kEvolution));
  Run blocked = RunStream({{"allowSourceColumnRename", "always"}});
  EXPECT_THAT(blocked.status.message(), HasSubstr("(DROP COLUMN) between Delta version 0 and 1"));
  Run dropped = RunStream({{"allowSourceColumnDrop", "always"}});
  ASSERT_TRUE(dropped.status.ok()) << dropped.status.ToString();
  EXPECT_EQ(dropped.rows, (Rows{"3|c"}));
}

TEST_F(DeltaSourceSchemaLogTest, AddedColumnContinuesAfterTheRestart) {
  CreateTable();
  ASSERT_TRUE(RunStream().status.ok());
  engine::Field u;
  u.name = "u";
  u.type.id = engine::TypeId::kVarchar;
  ASSERT_TRUE(Writer()->AddColumns({u}).ok());                     // v1
  Append("SELECT 3::BIGINT AS id, 'c' AS s, 'z' AS t, 'n' AS u");  // v2
  Run stopped = RunStream();
  EXPECT_THAT(stopped.status.message(), HasSubstr(kEvolution));
  EXPECT_THAT(stopped.status.message(), HasSubstr(kAdditiveSchemaChangeTag));
  Run next = RunStream();
  ASSERT_TRUE(next.status.ok()) << next.status.ToString();
  EXPECT_EQ(next.columns, (Names{"id", "s", "t", "u"}));
  EXPECT_EQ(next.rows, (Rows{"3|c|z|n"}));
}

TEST_F(DeltaSourceSchemaLogTest, StartingVersionReadsWithThatVersionsSchema) {
  CreateTable();                                          // v0
  ASSERT_TRUE(Writer()->RenameColumn({"s"}, "s2").ok());  // v1
  Append("SELECT 3::BIGINT AS id, 'c' AS s2, 'z' AS t");  // v2
  Run first = RunStream({{"startingVersion", "0"}});
  EXPECT_EQ(first.columns, (Names{"id", "s", "t"}));
  EXPECT_EQ(testing::Sorted(first.rows), (Rows{"1|a|x", "2|b|y"}));
  EXPECT_THAT(first.status.message(), HasSubstr(kEvolution));
  Run next = RunStream({{"startingVersion", "0"}, {"allowSourceColumnRename", "always"}});
  ASSERT_TRUE(next.status.ok()) << next.status.ToString();
  EXPECT_EQ(next.rows, (Rows{"3|c|z"}));
}

TEST_F(DeltaSourceSchemaLogTest, StopBetweenTheBarriersCommitAndItsEntryRecordsItOnRestart) {
  CreateTable();
  ASSERT_TRUE(RunStream().status.ok());
  ASSERT_TRUE(Writer()->RenameColumn({"s"}, "s2").ok());
  Append("SELECT 3::BIGINT AS id, 'c' AS s2, 'z' AS t");
  Run crashed = RunStream({}, /*crash_before_commit=*/true);
  ASSERT_TRUE(crashed.status.ok()) << crashed.status.ToString();
  EXPECT_EQ(std::get<0>(Newest()), 0);  // not recorded
  Run restarted = RunStream();
  EXPECT_THAT(restarted.status.message(), HasSubstr(kEvolution));
  EXPECT_EQ(Newest(), std::make_tuple(int64_t{1}, int64_t{1}, Names{"id", "s2", "t"}));
  Run unblocked = RunStream({{"allowSourceColumnRename", "always"}});
  ASSERT_TRUE(unblocked.status.ok()) << unblocked.status.ToString();
  EXPECT_EQ(unblocked.rows, (Rows{"3|c|z"}));
}

TEST_F(DeltaSourceSchemaLogTest, OptionsAreChecked) {
  CreateTable();
  Run outside = RunStream({{"schemaTrackingLocation", dir_.path() + "/elsewhere"}});
  EXPECT_THAT(outside.status.message(),
              HasSubstr("DELTA_STREAMING_SCHEMA_LOCATION_NOT_UNDER_CHECKPOINT"));
  Run inside = RunStream({{"schemaTrackingLocation", dir_.path() + "/ckpt/_schema_log"}});
  EXPECT_TRUE(inside.status.ok()) << inside.status.ToString();
  auto alone =
      CreateSource("delta", Ctx(ckpt_, {{"path", table_}, {"allowSourceColumnDrop", "always"}}));
  ASSERT_FALSE(alone.ok());
  EXPECT_THAT(alone.status().message(), HasSubstr("'schemaTrackingLocation' too"));
  auto no_checkpoint =
      CreateSource("delta", Ctx("", {{"path", table_}, {"schemaTrackingLocation", "x"}}));
  ASSERT_FALSE(no_checkpoint.ok());
  EXPECT_THAT(no_checkpoint.status().message(), HasSubstr("needs a streaming query"));
  // Spark's reader ignores allowSourceColumnRenameAndDrop (a SQL conf); Sluice names it.
  Run unknown = RunStream({{"allowSourceColumnRenameAndDrop", "always"}});
  EXPECT_THAT(unknown.status.message(), HasSubstr("allowSourceColumnRenameAndDrop"));
}

TEST(DeltaSourceOffsetTest, MetadataChangeBarrierInDeltasShape) {
  DeltaSourceOffset barrier{"abc", 2, DeltaSourceOffset::kMetadataChangeIndex, false};
  EXPECT_EQ(barrier.ToJson(),
            "{\"sourceVersion\":3,\"reservoirId\":\"abc\",\"reservoirVersion\":2,\"index\":-20,"
            "\"isStartingVersion\":false}");
  EXPECT_EQ(*DeltaSourceOffset::Parse(barrier.ToJson()), barrier);
  // Delta's offset after the barrier is read as the same position.
  auto post = DeltaSourceOffset::Parse(
      "{\"sourceVersion\":3,\"reservoirId\":\"abc\",\"reservoirVersion\":2,\"index\":-19,"
      "\"isStartingVersion\":false}");
  ASSERT_TRUE(post.ok()) << post.status().ToString();
  EXPECT_TRUE(post->AtMetadataChange());
  EXPECT_TRUE(DeltaSourceOffset::Parse("{\"sourceVersion\":1,\"reservoirId\":\"abc\","
                                       "\"reservoirVersion\":2,\"index\":-5,"
                                       "\"isStartingVersion\":false}")
                  .status()
                  .IsCorruption());
}

}  // namespace
}  // namespace sluice::sources
