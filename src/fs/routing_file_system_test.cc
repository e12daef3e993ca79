#include "fs/routing_file_system.h"

#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "fs/test_util.h"

namespace sluice::fs {
namespace {

TEST(RoutingFileSystemTest, LocalPathsGoToTheLocalFileSystem) {
  ScopedTempDir dir("routing");
  std::shared_ptr<FileSystem> fs = PathFileSystem();
  const std::string path = JoinPath(dir.path(), "d/f");
  ASSERT_TRUE(fs->CreateIfAbsent(path, "one").ok());
  EXPECT_TRUE(fs->CreateIfAbsent(path, "two").IsAlreadyExists());
  Result<std::string> read = fs->ReadFile(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, "one");
  ASSERT_TRUE(fs->AtomicReplace(path, "three").ok());
  EXPECT_EQ(*LocalFileSystem()->ReadFile(path), "three");
  Result<std::vector<FileInfo>> listed = fs->List(JoinPath(dir.path(), "d"));
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ(BaseName((*listed)[0].path), "f");
  Result<FileSystem::PreparedFile> prepared = fs->PrepareCreate(JoinPath(dir.path(), "p"), "x");
  ASSERT_TRUE(prepared.ok());
  ASSERT_TRUE(fs->PublishCreate(*prepared).ok());
  EXPECT_EQ(*fs->ReadFile(JoinPath(dir.path(), "p")), "x");
  ASSERT_TRUE(fs->RenameNoReplace(path, JoinPath(dir.path(), "g")).ok());
  EXPECT_FALSE(*fs->Exists(path));
  ASSERT_TRUE(fs->DeleteRecursive(dir.path()).ok());
  EXPECT_FALSE(*LocalFileSystem()->Exists(dir.path()));
}

// Every operation refuses a scheme Sluice does not serve, naming it, and touches nothing local.
TEST(RoutingFileSystemTest, UnsupportedSchemesAreRefusedByNameEverywhere) {
  ScopedTempDir dir("routing");
  char old_cwd[4096];
  ASSERT_NE(::getcwd(old_cwd, sizeof(old_cwd)), nullptr);
  ASSERT_EQ(::chdir(dir.path().c_str()), 0);
  std::shared_ptr<FileSystem> fs = PathFileSystem();
  for (const std::string scheme : {"s3a", "s3n", "gs", "abfss", "wasbs", "hdfs", "dbfs"}) {
    const std::string path = scheme + "://bucket/t/_delta_log/00000000000000000000.json";
    const std::string expected = "scheme '" + scheme + "' is not supported";
    std::vector<Status> results = {
        fs->CreateIfAbsent(path, "x"),
        fs->AtomicReplace(path, "x"),
        fs->ReadFile(path).status(),
        fs->List(scheme + "://bucket/t").status(),
        fs->ListRecursive(scheme + "://bucket/t").status(),
        fs->Stat(path).status(),
        fs->Exists(path).status(),
        fs->DeleteFile(path),
        fs->DeleteRecursive(scheme + "://bucket/t"),
        fs->CreateDirectories(scheme + "://bucket/t"),
        fs->RenameNoReplace(path, path + ".2"),
        fs->SetModificationTime(path, 0),
        fs->SyncFile(path),
        fs->SyncDirectory(scheme + "://bucket/t"),
        fs->PrepareCreate(path, "x").status(),
    };
    for (size_t i = 0; i < results.size(); ++i) {
      EXPECT_TRUE(results[i].IsNotSupported())
          << scheme << " op " << i << ": " << results[i].ToString();
      EXPECT_NE(results[i].message().find(expected), std::string::npos)
          << scheme << " op " << i << ": " << results[i].ToString();
    }
  }
  Result<std::vector<FileInfo>> left = LocalFileSystem()->List(".");
  ASSERT_EQ(::chdir(old_cwd), 0);
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty()) << "a local entry appeared: " << (*left)[0].path;
}

TEST(RoutingFileSystemTest, RenameAcrossFileSystemsIsRefused) {
  ScopedTempDir dir("routing");
  std::shared_ptr<FileSystem> fs = PathFileSystem();
  const std::string local = JoinPath(dir.path(), "f");
  ASSERT_TRUE(fs->CreateIfAbsent(local, "x").ok());
  Status st = fs->RenameNoReplace(local, "s3://bucket/f");
  EXPECT_TRUE(st.IsNotSupported()) << st.ToString();
  EXPECT_NE(st.message().find("different file systems"), std::string::npos) << st.ToString();
  EXPECT_TRUE(*fs->Exists(local));
}

}  // namespace
}  // namespace sluice::fs
