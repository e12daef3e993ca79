// The schema log's format (delta_schema_log.h): Spark's own log read as it wrote it
// (test/fixtures/delta/streaming/spark-schema-log, written by
// test/interop/delta/spark_schema_tracking_probe.py), entries appended and read back, errors.
#include "sources/delta_schema_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/schema.h"
#include "sources/test_util.h"

namespace sluice::sources {
namespace {

using ::testing::HasSubstr;

constexpr const char* kSparkTableId = "5ef372e7-76db-4248-9e73-039d9f2967df";

std::string SparkLogLocation() {
  return std::string(SLUICE_SOURCE_DIR) + "/test/fixtures/delta/streaming/spark-schema-log";
}

std::vector<std::string> Names(const std::string& schema_json) {
  auto schema = delta::ParseSchemaString(schema_json);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  std::vector<std::string> out;
  if (schema.ok()) {
    for (const auto& f : schema->fields) out.push_back(f.name);
  }
  return out;
}

// Spark's log after RENAME COLUMN s TO s2 (version 2) and DROP COLUMN t (version 4).
TEST(DeltaSchemaLogTest, ReadsSparksLog) {
  DeltaSchemaLog log(fs::LocalFileSystem(), SparkLogLocation(), kSparkTableId);
  auto latest = log.Latest();
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  ASSERT_TRUE(latest->has_value());
  EXPECT_EQ((*latest)->first, 2);  // .2.crc beside the entries is not an entry
  const SchemaLogEntry& e = (*latest)->second;
  EXPECT_EQ(e.table_id, kSparkTableId);
  EXPECT_EQ(e.delta_commit_version, 4);
  EXPECT_EQ(Names(e.data_schema_json), (std::vector<std::string>{"id", "s2"}));
  EXPECT_EQ(e.table_configurations.at("delta.columnMapping.mode"), "name");
  ASSERT_TRUE(e.protocol_json.has_value());
  EXPECT_THAT(*e.protocol_json, HasSubstr("columnMapping"));
  auto first = log.Get(0);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->delta_commit_version, 1);
  EXPECT_EQ(Names(first->data_schema_json), (std::vector<std::string>{"id", "s", "t"}));
  auto renamed = log.Get(1);
  ASSERT_TRUE(renamed.ok());
  EXPECT_EQ(renamed->delta_commit_version, 2);
  EXPECT_EQ(Names(renamed->data_schema_json), (std::vector<std::string>{"id", "s2", "t"}));
  // Another table's log under the same location is another directory: empty.
  auto wrong = DeltaSchemaLog(fs::LocalFileSystem(), SparkLogLocation(), "other").Latest();
  ASSERT_TRUE(wrong.ok());
  EXPECT_FALSE(wrong->has_value());
}

// Spark's log after RENAME COLUMN s TO s2 (version 2) and, with no data between,
// DROP COLUMN t (version 3): entry 2 merges the two changes and names entry 0 as the one the
// series started from (test/interop/delta/spark_schema_tracking_probe2.py, rename-then-drop).
TEST(DeltaSchemaLogTest, ReadsSparksMergedEntry) {
  DeltaSchemaLog log(
      fs::LocalFileSystem(),
      std::string(SLUICE_SOURCE_DIR) + "/test/fixtures/delta/streaming/spark-schema-log-merged",
      "c2b1a9fd-3df3-4252-82c8-3f04cb4d75d8");
  auto latest = log.Latest();
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  ASSERT_TRUE(latest->has_value());
  EXPECT_EQ((*latest)->first, 2);
  EXPECT_EQ((*latest)->second.delta_commit_version, 3);
  EXPECT_EQ((*latest)->second.previous_metadata_seq_num, std::optional<int64_t>(0));
  EXPECT_EQ(Names((*latest)->second.data_schema_json), (std::vector<std::string>{"id", "s2"}));
  auto before = log.Get(1);
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(before->previous_metadata_seq_num.has_value());
  // Written back, the field keeps Delta's name.
  EXPECT_THAT(SerializeSchemaLogEntry((*latest)->second),
              HasSubstr("\"previousMetadataSeqNum\":0"));
}

TEST(DeltaSchemaLogTest, AppendsAndReadsBack) {
  testing::TempDir dir;
  DeltaSchemaLog log(fs::LocalFileSystem(), dir.path() + "/_schema_log", "t1");
  auto empty = log.Latest();
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_FALSE(empty->has_value());
  SchemaLogEntry e;
  e.table_id = "t1";
  e.delta_commit_version = 7;
  e.data_schema_json = R"({"type":"struct","fields":[]})";
  e.partition_schema_json = R"({"type":"struct","fields":[]})";
  e.source_metadata_path = dir.path() + "/sources/0";
  e.table_configurations = {{"delta.columnMapping.mode", "id"}};
  ASSERT_TRUE(log.Append(0, e).ok());
  e.delta_commit_version = 9;
  ASSERT_TRUE(log.Append(1, e).ok());
  EXPECT_TRUE(log.Append(1, e).IsAlreadyExists());  // a second writer of the same index loses
  auto latest = log.Latest();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->first, 1);
  EXPECT_EQ((*latest)->second.delta_commit_version, 9);
  EXPECT_EQ((*latest)->second.table_configurations, e.table_configurations);
  EXPECT_FALSE((*latest)->second.protocol_json.has_value());
  auto text = fs::LocalFileSystem()->ReadFile(log.dir() + "/0");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->substr(0, 3), "v1\n");
  EXPECT_TRUE(log.Append(2, SchemaLogEntry{}).IsInvalidArgument());  // another table's entry
}

TEST(DeltaSchemaLogTest, BadEntriesAreCorruption) {
  EXPECT_THAT(ParseSchemaLogEntry("{}", "f").status().message(), HasSubstr("'v1'"));
  EXPECT_TRUE(ParseSchemaLogEntry("v1\nnot json", "f").status().IsCorruption());
  auto missing = ParseSchemaLogEntry(R"(v1
{"tableId":"t","deltaCommitVersion":"3"})",
                                     "dir/0");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("dir/0"));
  EXPECT_THAT(missing.status().message(), HasSubstr("deltaCommitVersion"));
  testing::TempDir dir;
  DeltaSchemaLog log(fs::LocalFileSystem(), dir.path(), "mine");
  ASSERT_TRUE(fs::LocalFileSystem()
                  ->CreateIfAbsent(log.dir() + "/0", SerializeSchemaLogEntry([] {
                                     SchemaLogEntry e;
                                     e.table_id = "theirs";
                                     return e;
                                   }()))
                  .ok());
  auto latest = log.Latest();
  ASSERT_FALSE(latest.ok());
  EXPECT_TRUE(latest.status().IsCorruption());
  EXPECT_THAT(latest.status().message(), HasSubstr("'theirs'"));
}

}  // namespace
}  // namespace sluice::sources
