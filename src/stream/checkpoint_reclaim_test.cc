#include "stream/checkpoint_reclaim.h"

#include <gtest/gtest.h>

#include "fs/local_file_system.h"
#include "fs/test_util.h"
#include "ops/state_work_dir.h"

namespace sluice::stream {
namespace {

// What a SIGKILLed run leaves is removed by the next owner of the lock; other checkpoints nested
// in this one (a flow's, with its own lock) are left alone (issue 24 #6).
TEST(CheckpointReclaimTest, RemovesWorkDirsAndTempFilesButNotNestedCheckpoints) {
  fs::ScopedTempDir tmp("sluice-reclaim");
  auto fs = fs::LocalFileSystem();
  const std::string root = tmp.Join("cp");
  auto work = ops::CreateStateWorkDir(root, "agg-state");
  ASSERT_TRUE(work.ok()) << work.status().ToString();
  EXPECT_EQ(work->rfind(root + "/_work/agg-state-", 0), 0u) << *work;
  ASSERT_TRUE(fs->AtomicReplace(*work + "/000001.sst", "rocksdb").ok());
  ASSERT_TRUE(fs->AtomicReplace(root + "/offsets/3", "v1").ok());
  ASSERT_TRUE(fs->AtomicReplace(root + "/offsets/.4.0123abcd.tmp", "torn").ok());
  ASSERT_TRUE(fs->AtomicReplace(root + "/state/0/1/.2.delta.ffff.tmp", "torn").ok());
  ASSERT_TRUE(fs->AtomicReplace(root + "/.metadata.aa.tmp", "torn").ok());
  ASSERT_TRUE(fs->AtomicReplace(root + "/flows/f/lock", "").ok());
  ASSERT_TRUE(fs->AtomicReplace(root + "/flows/f/offsets/.1.bb.tmp", "in flight").ok());

  auto r = ReclaimCheckpointLeftovers(*fs, root);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->work_dirs, 1);
  EXPECT_EQ(r->temp_files, 3);
  EXPECT_FALSE(*fs->Exists(*work));
  EXPECT_TRUE(*fs->Exists(root + "/_work"));
  EXPECT_TRUE(*fs->Exists(root + "/offsets/3"));
  EXPECT_FALSE(*fs->Exists(root + "/offsets/.4.0123abcd.tmp"));
  EXPECT_FALSE(*fs->Exists(root + "/state/0/1/.2.delta.ffff.tmp"));
  EXPECT_FALSE(*fs->Exists(root + "/.metadata.aa.tmp"));
  EXPECT_TRUE(*fs->Exists(root + "/flows/f/offsets/.1.bb.tmp"));

  auto again = ReclaimCheckpointLeftovers(*fs, root);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->work_dirs + again->temp_files, 0);
  auto fresh = ReclaimCheckpointLeftovers(*fs, tmp.Join("none"));
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
}

}  // namespace
}  // namespace sluice::stream
