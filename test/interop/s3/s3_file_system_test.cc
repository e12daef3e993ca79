// The FileSystem contract of S3FileSystem against moto's S3 server (with_moto.sh sets
// AWS_ENDPOINT_URL_S3 and test credentials): write, read, ranged read, listings with more than
// 1000 keys (pagination), put-if-absent raced from two processes (exactly one wins each key),
// multipart uploads, delete, and errors that name bucket, key, HTTP status and S3 error code.
// docs/s3.md.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fs/file_system.h"
#include "fs/s3_file_system.h"

namespace sluice::fs {
namespace {

S3Config TestConfig() {
  Result<S3Config> c = S3Config::FromEnvironment();
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  S3Config config = c.ok() ? *c : S3Config{};
  config.base_backoff_ms = 5;
  config.max_backoff_ms = 100;
  return config;
}

class S3FileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(std::getenv("AWS_ENDPOINT_URL_S3"), nullptr)
        << "run through test/interop/s3/with_moto.sh (it starts moto's S3 server)";
    fs_ = std::make_unique<S3FileSystem>(TestConfig());
    std::random_device rd;
    bucket_ = "sluice-test-" + std::to_string(rd() % 1000000000);
    ASSERT_TRUE(fs_->client().CreateBucket(bucket_).ok());
    root_ = "s3://" + bucket_;
  }
  std::string P(const std::string& key) const { return root_ + "/" + key; }

  std::unique_ptr<S3FileSystem> fs_;
  std::string bucket_;
  std::string root_;
};

TEST_F(S3FileSystemTest, WriteReadReplaceStatDelete) {
  ASSERT_TRUE(fs_->CreateIfAbsent(P("t/_delta_log/0.json"), "v0").ok());
  EXPECT_EQ(*fs_->ReadFile(P("t/_delta_log/0.json")), "v0");

  Status again = fs_->CreateIfAbsent(P("t/_delta_log/0.json"), "other");
  ASSERT_TRUE(again.IsAlreadyExists()) << again.ToString();
  EXPECT_NE(again.message().find("creating " + P("t/_delta_log/0.json") +
                                 ": S3 PutObject: HTTP 412 PreconditionFailed"),
            std::string::npos)
      << again.ToString();
  EXPECT_NE(again.message().find("(bucket " + bucket_ + ", key t/_delta_log/0.json"),
            std::string::npos)
      << again.ToString();
  EXPECT_EQ(*fs_->ReadFile(P("t/_delta_log/0.json")), "v0");  // not overwritten

  ASSERT_TRUE(fs_->AtomicReplace(P("t/_delta_log/_last_checkpoint"), "a").ok());
  ASSERT_TRUE(fs_->AtomicReplace(P("t/_delta_log/_last_checkpoint"), "bb").ok());
  EXPECT_EQ(*fs_->ReadFile(P("t/_delta_log/_last_checkpoint")), "bb");

  auto st = fs_->Stat(P("t/_delta_log/_last_checkpoint"));
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->size, 2);
  EXPECT_FALSE(st->is_directory);
  EXPECT_GT(st->mtime_ms, 1700000000000);
  auto dir = fs_->Stat(P("t/_delta_log"));
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  EXPECT_TRUE(dir->is_directory);
  EXPECT_TRUE(*fs_->Exists(P("t")));
  EXPECT_FALSE(*fs_->Exists(P("t/nope")));

  ASSERT_TRUE(fs_->DeleteFile(P("t/_delta_log/_last_checkpoint")).ok());
  Status gone = fs_->DeleteFile(P("t/_delta_log/_last_checkpoint"));
  ASSERT_TRUE(gone.IsNotFound()) << gone.ToString();
  EXPECT_NE(gone.message().find("deleting " + P("t/_delta_log/_last_checkpoint")),
            std::string::npos);

  auto missing = fs_->ReadFile(P("t/missing"));
  ASSERT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("reading " + P("t/missing") +
                                            ": S3 GetObject: HTTP 404 NoSuchKey"),
            std::string::npos)
      << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("(bucket " + bucket_ + ", key t/missing"),
            std::string::npos);

  EXPECT_TRUE(fs_->SetModificationTime(P("t/_delta_log/0.json"), 1).IsNotSupported());
  EXPECT_TRUE(fs_->SyncFile(P("t/_delta_log/0.json")).ok());
}

TEST_F(S3FileSystemTest, RangedReads) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data += static_cast<char>('a' + i % 26);
  ASSERT_TRUE(fs_->CreateIfAbsent(P("r/data"), data).ok());
  EXPECT_EQ(*fs_->ReadRange(P("r/data"), 10, 20), data.substr(10, 20));
  EXPECT_EQ(*fs_->ReadRange(P("r/data"), 990, 100), data.substr(990));  // short at the end
  EXPECT_EQ(*fs_->ReadRange(P("r/data"), 0, 0), "");
  EXPECT_EQ(*fs_->ReadRange(P("r/data"), 5000, 10), "");
  auto missing = fs_->ReadRange(P("r/none"), 0, 10);
  EXPECT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
}

TEST_F(S3FileSystemTest, ListingsFollowPaginationPastAThousandKeys) {
  constexpr int kFiles = 1500;
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t) {
    writers.emplace_back([&] {
      for (int i = next++; i < kFiles; i = next++) {
        char name[32];
        std::snprintf(name, sizeof(name), "d/f%05d", i);
        if (!fs_->CreateIfAbsent(P(name), std::to_string(i)).ok()) ++failures;
      }
    });
  }
  for (std::thread& w : writers) w.join();
  ASSERT_EQ(failures.load(), 0);
  ASSERT_TRUE(fs_->CreateIfAbsent(P("d/sub/x"), "x").ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(P("d/sub/deeper/y"), "yy").ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(P("dz"), "not under d/").ok());

  auto list = fs_->List(P("d"));
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), static_cast<size_t>(kFiles + 1));
  EXPECT_EQ((*list)[0].path, P("d/f00000"));
  EXPECT_EQ((*list)[0].size, 1);
  EXPECT_EQ((*list)[kFiles - 1].path, P("d/f01499"));
  EXPECT_EQ((*list)[kFiles].path, P("d/sub"));
  EXPECT_TRUE((*list)[kFiles].is_directory);
  for (size_t i = 1; i < list->size(); ++i) EXPECT_LT((*list)[i - 1].path, (*list)[i].path);

  auto prefixed = fs_->List(P("d"), "f012");
  ASSERT_TRUE(prefixed.ok()) << prefixed.status().ToString();
  EXPECT_EQ(prefixed->size(), 100u);
  auto none = fs_->List(P("d"), "zzz");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());

  auto all = fs_->ListRecursive(P("d"));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), static_cast<size_t>(kFiles + 2));
  EXPECT_EQ(all->back().path, P("d/sub/x"));
  EXPECT_EQ((*all)[kFiles].path, P("d/sub/deeper/y"));
  EXPECT_EQ((*all)[kFiles].size, 2);

  auto root = fs_->List(root_);
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  ASSERT_EQ(root->size(), 2u);
  EXPECT_EQ((*root)[0].path, P("d"));
  EXPECT_EQ((*root)[1].path, P("dz"));

  auto missing = fs_->List(P("nodir"));
  ASSERT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("bucket " + bucket_), std::string::npos);
  EXPECT_TRUE(fs_->ListRecursive(P("nodir")).status().IsNotFound());
  EXPECT_TRUE(fs_->List(P("nodir"), "x").status().IsNotFound());

  ASSERT_TRUE(fs_->DeleteRecursive(P("d")).ok());
  EXPECT_TRUE(fs_->List(P("d")).status().IsNotFound());
  EXPECT_EQ(*fs_->ReadFile(P("dz")), "not under d/");
  EXPECT_TRUE(fs_->DeleteRecursive(P("d")).ok());  // absent: OK
}

TEST_F(S3FileSystemTest, EmptyDirectoriesExistThroughTheirMarker) {
  ASSERT_TRUE(fs_->CreateDirectories(P("wh/_checkpoints/q1")).ok());
  auto list = fs_->List(P("wh/_checkpoints/q1"));
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_TRUE(list->empty());
  EXPECT_TRUE(*fs_->Exists(P("wh/_checkpoints/q1")));
  auto parent = fs_->List(P("wh/_checkpoints"));
  ASSERT_TRUE(parent.ok()) << parent.status().ToString();
  ASSERT_EQ(parent->size(), 1u);
  EXPECT_TRUE((*parent)[0].is_directory);
  ASSERT_TRUE(fs_->CreateIfAbsent(P("wh/_checkpoints/q1/offsets/0"), "v1").ok());
  auto files = fs_->ListRecursive(P("wh"));
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 1u);  // the marker is not a file
  EXPECT_EQ((*files)[0].path, P("wh/_checkpoints/q1/offsets/0"));
}

TEST_F(S3FileSystemTest, RenameNoReplaceRefusesAnExistingTarget) {
  ASSERT_TRUE(fs_->CreateIfAbsent(P("a/tmp"), "A").ok());
  ASSERT_TRUE(fs_->CreateIfAbsent(P("a/taken"), "T").ok());
  Status taken = fs_->RenameNoReplace(P("a/tmp"), P("a/taken"));
  ASSERT_TRUE(taken.IsAlreadyExists()) << taken.ToString();
  EXPECT_EQ(*fs_->ReadFile(P("a/taken")), "T");
  ASSERT_TRUE(fs_->RenameNoReplace(P("a/tmp"), P("a/final")).ok());
  EXPECT_EQ(*fs_->ReadFile(P("a/final")), "A");
  EXPECT_FALSE(*fs_->Exists(P("a/tmp")));
}

TEST_F(S3FileSystemTest, MultipartUploadsAndTheirCondition) {
  S3Config config = TestConfig();
  config.multipart_threshold = 5 << 20;
  config.part_size = 5 << 20;
  S3FileSystem fs(config);
  std::string big(12 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 131) % 251);
  ASSERT_TRUE(fs.CreateIfAbsent(P("big/part-0.parquet"), big).ok());
  auto back = fs.ReadFile(P("big/part-0.parquet"));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(*back == big);
  EXPECT_EQ(*fs.ReadRange(P("big/part-0.parquet"), (5 << 20) - 3, 6),
            big.substr((5 << 20) - 3, 6));  // across a part boundary
  Status again = fs.CreateIfAbsent(P("big/part-0.parquet"), big);
  ASSERT_TRUE(again.IsAlreadyExists()) << again.ToString();
  EXPECT_NE(again.message().find("S3 CompleteMultipartUpload: HTTP 412"), std::string::npos)
      << again.ToString();
  std::string other(6 << 20, 'z');
  ASSERT_TRUE(fs.AtomicReplace(P("big/part-0.parquet"), other).ok());
  EXPECT_TRUE(*fs.ReadFile(P("big/part-0.parquet")) == other);
}

// Two processes race CreateIfAbsent on the same 100 keys: every key has exactly one winner, the
// loser got AlreadyExists, and the object holds the winner's bytes.
TEST_F(S3FileSystemTest, PutIfAbsentRacedFromTwoProcessesHasExactlyOneWinner) {
  constexpr int kKeys = 100;
  int start[2];
  ASSERT_EQ(::pipe(start), 0);
  int results[2][2];
  pid_t pids[2];
  for (int w = 0; w < 2; ++w) {
    ASSERT_EQ(::pipe(results[w]), 0);
    pids[w] = ::fork();
    ASSERT_GE(pids[w], 0);
    if (pids[w] == 0) {
      ::close(start[1]);
      ::close(results[w][0]);
      char go;
      if (::read(start[0], &go, 1) != 1) ::_exit(3);
      S3FileSystem fs(TestConfig());  // its own connections
      std::string outcome;
      for (int k = 0; k < kKeys; ++k) {
        Status st =
            fs.CreateIfAbsent(P("race/" + std::to_string(k)), "writer " + std::to_string(w));
        outcome += st.ok() ? 'W' : st.IsAlreadyExists() ? 'L' : 'E';
      }
      ssize_t n = ::write(results[w][1], outcome.data(), outcome.size());
      ::_exit(n == static_cast<ssize_t>(outcome.size()) ? 0 : 4);
    }
    ::close(results[w][1]);
  }
  ::close(start[0]);
  ASSERT_EQ(::write(start[1], "gg", 2), 2);  // both go at once
  ::close(start[1]);
  std::string outcome[2];
  for (int w = 0; w < 2; ++w) {
    char buf[256];
    ssize_t n;
    while ((n = ::read(results[w][0], buf, sizeof(buf))) > 0) outcome[w].append(buf, n);
    ::close(results[w][0]);
    int status = 0;
    ASSERT_EQ(::waitpid(pids[w], &status, 0), pids[w]);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer " << w;
    ASSERT_EQ(outcome[w].size(), static_cast<size_t>(kKeys));
  }
  int wins[2] = {0, 0};
  for (int k = 0; k < kKeys; ++k) {
    char a = outcome[0][k];
    char b = outcome[1][k];
    ASSERT_TRUE((a == 'W' && b == 'L') || (a == 'L' && b == 'W'))
        << "key " << k << ": writer 0 " << a << ", writer 1 " << b;
    int winner = a == 'W' ? 0 : 1;
    ++wins[winner];
    EXPECT_EQ(*fs_->ReadFile(P("race/" + std::to_string(k))), "writer " + std::to_string(winner));
  }
  std::printf("race: writer 0 won %d keys, writer 1 won %d\n", wins[0], wins[1]);
}

TEST_F(S3FileSystemTest, ErrorsNameBucketKeyStatusAndCode) {
  std::string nobucket = "s3://sluice-no-such-bucket/k";
  auto read = fs_->ReadFile(nobucket);
  ASSERT_TRUE(read.status().IsNotFound()) << read.status().ToString();
  EXPECT_NE(read.status().message().find("HTTP 404 NoSuchBucket"), std::string::npos)
      << read.status().ToString();
  EXPECT_NE(read.status().message().find("(bucket sluice-no-such-bucket, key k"),
            std::string::npos);
  Status create = fs_->CreateIfAbsent(nobucket, "x");
  ASSERT_FALSE(create.ok());
  EXPECT_NE(create.message().find("NoSuchBucket"), std::string::npos) << create.ToString();
  auto exists = fs_->Exists(nobucket);
  ASSERT_FALSE(exists.ok());
  EXPECT_NE(exists.status().message().find("NoSuchBucket"), std::string::npos);
  auto list = fs_->List("s3://sluice-no-such-bucket");
  ASSERT_TRUE(list.status().IsNotFound()) << list.status().ToString();
  EXPECT_NE(list.status().message().find("S3 ListObjectsV2: HTTP 404 NoSuchBucket"),
            std::string::npos);

  EXPECT_TRUE(fs_->CreateIfAbsent(root_, "x").IsInvalidArgument());
  auto bad = fs_->ReadFile("s3://UPPER/k");
  ASSERT_TRUE(bad.status().IsInvalidArgument());
  EXPECT_NE(bad.status().message().find("'UPPER' is not a bucket name"), std::string::npos);

  S3Config unreachable = TestConfig();
  unreachable.endpoint = "http://127.0.0.1:1";
  unreachable.max_attempts = 2;
  S3FileSystem down(unreachable);
  Status st = down.CreateIfAbsent(P("x"), "x");
  ASSERT_TRUE(st.IsIOError()) << st.ToString();
  EXPECT_EQ(st.message(), "creating " + P("x") +
                              ": S3 PutObject: no reply after 2 attempts: Connection (bucket " +
                              bucket_ + ", key x)");
}

TEST_F(S3FileSystemTest, FileSystemForPathServesS3FromTheEnvironment) {
  auto fs = FileSystemForPath(P("via/dispatch"));
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  ASSERT_TRUE((*fs)->CreateIfAbsent(P("via/dispatch"), "d").ok());
  EXPECT_EQ(*fs_->ReadFile(P("via/dispatch")), "d");
  EXPECT_TRUE((*fs)->CreateIfAbsent(P("via/dispatch"), "e").IsAlreadyExists());
}

}  // namespace
}  // namespace sluice::fs
