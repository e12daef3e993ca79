#include "fs/local_cache.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace sluice::fs {
namespace {

class LocalCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("SLUICE_LOCAL_CACHE_DIR", "/var/cache/sl", 1); }
  void TearDown() override { unsetenv("SLUICE_LOCAL_CACHE_DIR"); }
};

TEST_F(LocalCacheTest, MapsARemotePathUnderTheCacheRoot) {
  EXPECT_EQ(LocalCacheDirFor("s3://bucket/cp/q1"), "/var/cache/sl/s3/bucket/cp/q1");
  EXPECT_EQ(LocalCacheDirFor("s3://bucket//cp/q1/"), "/var/cache/sl/s3/bucket/cp/q1");
  EXPECT_EQ(LocalCacheDirFor("s3://bucket"), "/var/cache/sl/s3/bucket");
}

TEST_F(LocalCacheTest, NeverLeavesTheCacheRoot) {
  EXPECT_EQ(LocalCacheDirFor("s3://b/../../etc"), "/var/cache/sl/s3/b/_/_/etc");
  EXPECT_EQ(LocalCacheDirFor("s3://b/./x y:z"), "/var/cache/sl/s3/b/_/x_y_z");
}

TEST_F(LocalCacheTest, LocalPathsAreUnchanged) {
  EXPECT_EQ(LocalCacheDirFor("/data/cp"), "/data/cp");
  EXPECT_EQ(LocalCacheDirFor("cp/q"), "cp/q");
}

TEST(LocalCacheRootTest, FallsBackToTmpdir) {
  unsetenv("SLUICE_LOCAL_CACHE_DIR");
  const char* old = std::getenv("TMPDIR");
  std::string saved = old != nullptr ? old : "";
  setenv("TMPDIR", "/scratch", 1);
  EXPECT_EQ(LocalCacheDirFor("s3://b/k"), "/scratch/sluice-cache/s3/b/k");
  if (old != nullptr) {
    setenv("TMPDIR", saved.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
}

}  // namespace
}  // namespace sluice::fs
