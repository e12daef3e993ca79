// s3:// paths and the scheme dispatch: which file system serves a path, and the refusal of
// every scheme Sluice does not serve (no local directory named "gs:" any more).
#include <gtest/gtest.h>
#include <unistd.h>

#include "fs/file_system.h"
#include "fs/s3_file_system.h"
#include "fs/test_util.h"

namespace sluice::fs {
namespace {

TEST(S3PathTest, ParsesBucketAndKey) {
  auto p = ParseS3Path("s3://my-bucket.1/a//b/c/");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->bucket, "my-bucket.1");
  EXPECT_EQ(p->key, "a/b/c");
  auto root = ParseS3Path("s3://bkt");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->key, "");
  auto root2 = ParseS3Path("s3://bkt/");
  ASSERT_TRUE(root2.ok());
  EXPECT_EQ(root2->key, "");
  auto leading = ParseS3Path("s3://bkt//x");
  ASSERT_TRUE(leading.ok());
  EXPECT_EQ(leading->key, "x");
}

TEST(S3PathTest, RefusesBadPathsByName) {
  for (const char* bad : {"s3://", "s3:///key", "s3://ab/k", "s3://Upper/k", "s3://a_b_c/k",
                          "/local/path", "s3a://bkt/k"}) {
    auto p = ParseS3Path(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_TRUE(p.status().IsInvalidArgument()) << bad;
    EXPECT_NE(p.status().message().find(bad), std::string::npos) << p.status().ToString();
  }
}

TEST(SchemeTest, PathScheme) {
  EXPECT_EQ(PathScheme("s3://b/k"), "s3");
  EXPECT_EQ(PathScheme("abfss://c@a.dfs.core.windows.net/p"), "abfss");
  EXPECT_EQ(PathScheme("file:/tmp/x"), "file");
  EXPECT_EQ(PathScheme("s3+x.y-z:/k"), "s3+x.y-z");
  EXPECT_EQ(PathScheme("/abs/path"), "");
  EXPECT_EQ(PathScheme("relative/dir"), "");
  EXPECT_EQ(PathScheme("dir/with:colon"), "");
  EXPECT_EQ(PathScheme("c:/windows"), "");  // one letter: not a scheme
  EXPECT_EQ(PathScheme("1ab:/x"), "");
  EXPECT_EQ(PathScheme(""), "");
}

TEST(SchemeTest, LocalPathsGetTheLocalFileSystem) {
  auto fs = FileSystemForPath("/tmp/x");
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  EXPECT_EQ(fs->get(), LocalFileSystem().get());
  auto rel = FileSystemForPath("warehouse/t");
  ASSERT_TRUE(rel.ok());
  EXPECT_EQ(rel->get(), LocalFileSystem().get());
}

TEST(SchemeTest, UnsupportedSchemesAreRefusedByNameAndCreateNothing) {
  ScopedTempDir dir;
  ASSERT_EQ(::chdir(dir.path().c_str()), 0);
  for (const char* path :
       {"s3a://bkt/wh", "s3n://bkt/wh", "gs://bkt/wh", "abfss://c@acct/wh", "wasbs://c@acct/wh",
        "hdfs://nn/wh", "dbfs:/wh", "file:///tmp/wh", "http://host/wh"}) {
    auto fs = FileSystemForPath(path);
    ASSERT_FALSE(fs.ok()) << path;
    EXPECT_TRUE(fs.status().IsNotSupported()) << fs.status().ToString();
    std::string scheme(PathScheme(path));
    EXPECT_EQ(fs.status().message(), "'" + std::string(path) + "': scheme '" + scheme +
                                         "' is not supported (Sluice reads local paths and s3://)");
  }
  auto listing = LocalFileSystem()->List(".");
  ASSERT_TRUE(listing.ok());
  EXPECT_TRUE(listing->empty());
  ASSERT_EQ(::chdir("/"), 0);
}

TEST(SchemeTest, S3WithoutSlashesIsInvalid) {
  auto fs = FileSystemForPath("s3:bucket/k");
  ASSERT_FALSE(fs.ok());
  EXPECT_TRUE(fs.status().IsInvalidArgument()) << fs.status().ToString();
  EXPECT_NE(fs.status().message().find("s3://bucket/key"), std::string::npos);
}

TEST(SchemeTest, S3PathsGetTheS3FileSystem) {
  auto fs = FileSystemForPath("s3://bkt/wh");
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  EXPECT_NE(dynamic_cast<S3FileSystem*>(fs->get()), nullptr);
  auto again = FileSystemForPath("s3://other/x");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), fs->get());  // one process-wide instance
}

}  // namespace
}  // namespace sluice::fs
