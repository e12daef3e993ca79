#include "scaleout/task_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fs/test_util.h"

namespace sluice::scaleout {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TaskLayoutTest, PathsAndAppIds) {
  EXPECT_EQ(TasksDir("/wh/_checkpoints/t"), "/wh/_checkpoints/t/tasks");
  EXPECT_EQ(TaskCheckpointRoot("/wh/_checkpoints/t", 0), "/wh/_checkpoints/t/tasks/0");
  EXPECT_EQ(TaskCheckpointRoot("s3://b/cp", 17), "s3://b/cp/tasks/17");
  EXPECT_EQ(TaskAppId("3f0c1b2a-0000-4000-8000-000000000000", 5),
            "3f0c1b2a-0000-4000-8000-000000000000-task-5");
  // Distinct per partition: each task's batches are its own txn in the one table.
  EXPECT_NE(TaskAppId("q", 1), TaskAppId("q", 11));
}

TEST(TaskLayoutTest, TaskDirNames) {
  EXPECT_EQ(*ParseTaskDirName("0"), 0);
  EXPECT_EQ(*ParseTaskDirName("42"), 42);
  EXPECT_EQ(*ParseTaskDirName("2147483647"), 2147483647);
  for (const char* bad : {"", "-1", "01", "a", "1a", "2147483648", "99999999999", " 1"}) {
    Result<int32_t> r = ParseTaskDirName(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(r.status().IsInvalidArgument()) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("'" + std::string(bad) + "'"));
  }
}

TEST(TaskLayoutTest, GroupRecordRoundTripsAndRefusesDamage) {
  const GroupRecord record{"orders-copy", "orders"};
  const std::string bytes = SerializeGroupRecord(record);
  EXPECT_EQ(bytes, R"({"version":1,"group":"orders-copy","topic":"orders"})");
  EXPECT_EQ(*ParseGroupRecord(bytes), record);
  for (const char* bad :
       {"", "{", "[]", R"({"group":"g","topic":"t"})", R"({"version":2,"group":"g","topic":"t"})",
        R"({"version":1,"topic":"t"})", R"({"version":1,"group":"g","topic":""})",
        R"({"version":1,"group":7,"topic":"t"})"}) {
    Result<GroupRecord> r = ParseGroupRecord(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(r.status().IsCorruption()) << bad;
  }
}

TEST(TaskLayoutTest, ClaimGroupRecordCreatesOnceAndComparesAfter) {
  fs::ScopedTempDir dir;
  auto fs = fs::LocalFileSystem();
  const std::string root = dir.Join("cp");
  ASSERT_TRUE(ClaimGroupRecord(*fs, root, {"g", "t"}).ok());
  EXPECT_EQ(*fs->ReadFile(fs::JoinPath(root, "group")), SerializeGroupRecord({"g", "t"}));
  // The same group again (another process, a restart): accepted.
  EXPECT_TRUE(ClaimGroupRecord(*fs, root, {"g", "t"}).ok());
  Status other_group = ClaimGroupRecord(*fs, root, {"h", "t"});
  EXPECT_TRUE(other_group.IsInvalidArgument());
  EXPECT_THAT(other_group.message(), HasSubstr("belongs to group 'g' on topic 't'"));
  EXPECT_THAT(other_group.message(), HasSubstr("not to group 'h' on topic 't'"));
  EXPECT_TRUE(ClaimGroupRecord(*fs, root, {"g", "u"}).IsInvalidArgument());
  // The record is never replaced by a refused claim.
  EXPECT_EQ(*fs->ReadFile(fs::JoinPath(root, "group")), SerializeGroupRecord({"g", "t"}));

  ASSERT_TRUE(fs->AtomicReplace(fs::JoinPath(root, "group"), "{torn").ok());
  Status torn = ClaimGroupRecord(*fs, root, {"g", "t"});
  EXPECT_TRUE(torn.IsCorruption());
  EXPECT_THAT(torn.message(), HasSubstr(fs::JoinPath(root, "group")));
}

TEST(TaskLayoutTest, ListTasks) {
  fs::ScopedTempDir dir;
  auto fs = fs::LocalFileSystem();
  const std::string root = dir.Join("cp");
  EXPECT_TRUE(ListTasks(*fs, root)->empty());  // no tasks/ yet
  for (int32_t p : {10, 2, 0}) {
    ASSERT_TRUE(
        fs->CreateIfAbsent(fs::JoinPath(TaskCheckpointRoot(root, p), "metadata"), "{}").ok());
  }
  EXPECT_THAT(*ListTasks(*fs, root), ElementsAre(0, 2, 10));
  ASSERT_TRUE(fs->CreateDirectories(fs::JoinPath(TasksDir(root), "x")).ok());
  Result<std::vector<int32_t>> bad = ListTasks(*fs, root);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsCorruption());
  EXPECT_THAT(bad.status().message(), HasSubstr("'x'"));
}

TEST(TaskLayoutTest, SingleProcessBatchesAreSeen) {
  fs::ScopedTempDir dir;
  auto fs = fs::LocalFileSystem();
  const std::string root = dir.Join("cp");
  EXPECT_FALSE(*HasSingleProcessBatches(*fs, root));
  // A group's tasks have offsets of their own, not the root.
  ASSERT_TRUE(
      fs->CreateIfAbsent(fs::JoinPath(TaskCheckpointRoot(root, 0), "offsets/0"), "v1").ok());
  EXPECT_FALSE(*HasSingleProcessBatches(*fs, root));
  ASSERT_TRUE(fs->CreateIfAbsent(fs::JoinPath(root, "offsets/0"), "v1").ok());
  EXPECT_TRUE(*HasSingleProcessBatches(*fs, root));
}

}  // namespace
}  // namespace sluice::scaleout
