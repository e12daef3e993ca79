// The C++ API's streaming queries with checkpointLocation and the Delta sink on s3:// (moto's S3
// server through with_moto.sh): a files -> Delta query and a COMPLETE aggregation run with
// AvailableNow, restarted after a new file, exact; their offsets, commits and state files are on
// S3, the RocksDB copy in the local cache (fs/local_cache.h), and no local "s3:" directory
// appears. docs/storage.md.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fs/file_system.h"
#include "fs/s3_file_system.h"
#include "fs/test_util.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

std::vector<std::string> Sorted(const DataFrame& df) {
  auto rows = df.Collect();
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  if (!rows.ok()) return {};
  std::vector<std::string> out = rows->RowStrings();
  std::sort(out.begin(), out.end());
  return out;
}

std::set<std::string> Names(fs::FileSystem& fs, const std::string& dir) {
  std::set<std::string> out;
  auto listed = fs.List(dir);
  EXPECT_TRUE(listed.ok()) << listed.status().ToString();
  if (!listed.ok()) return out;
  for (const auto& e : *listed) out.insert(fs::BaseName(e.path));
  return out;
}

TEST(S3StreamingApiTest, CheckpointsAndDeltaSinksOnS3RestartExactly) {
  ASSERT_NE(std::getenv("AWS_ENDPOINT_URL_S3"), nullptr)
      << "run through test/interop/s3/with_moto.sh (it starts moto's S3 server)";
  fs::ScopedTempDir dir("sluice-s3-api");
  ASSERT_EQ(setenv("SLUICE_LOCAL_CACHE_DIR", dir.Join("cache").c_str(), 1), 0);
  auto config = fs::S3Config::FromEnvironment();
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  fs::S3FileSystem s3(*config);
  std::random_device rd;
  const std::string bucket = "sluice-api-" + std::to_string(rd() % 1000000000);
  ASSERT_TRUE(s3.client().CreateBucket(bucket).ok());
  const std::string root = "s3://" + bucket;

  const std::string landing = dir.Join("landing");
  auto local = fs::LocalFileSystem();
  ASSERT_TRUE(local
                  ->CreateIfAbsent(fs::JoinPath(landing, "a.json"),
                                   "{\"id\": 1, \"kind\": \"click\"}\n"
                                   "{\"id\": 2, \"kind\": \"view\"}\n")
                  .ok());
  ASSERT_TRUE(
      local->CreateIfAbsent(fs::JoinPath(landing, "b.json"), "{\"id\": 3, \"kind\": \"click\"}\n")
          .ok());
  const std::string cwd = dir.Join("cwd");
  ASSERT_TRUE(local->CreateDirectories(cwd).ok());
  ASSERT_EQ(chdir(cwd.c_str()), 0);

  auto session = Session::Open({.warehouse = dir.Join("wh")});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto run = [&]() {
    DataFrame in = (*session)
                       ->ReadStream()
                       .Format("files")
                       .Option("format", "json")
                       .Option("maxFilesPerTrigger", 1)
                       .Schema("id BIGINT, kind STRING")
                       .Load(landing);
    auto rows = in.WriteStream()
                    .Format("delta")
                    .Option("checkpointLocation", root + "/cp/rows")
                    .Trigger(Trigger::AvailableNow())
                    .Start(root + "/out/rows");
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    auto counts = in.GroupBy({"kind"})
                      .Count()
                      .WriteStream()
                      .Format("delta")
                      .OutputMode("complete")
                      .Option("checkpointLocation", root + "/cp/counts")
                      .Trigger(Trigger::AvailableNow())
                      .Start(root + "/out/counts");
    ASSERT_TRUE(counts.ok()) << counts.status().ToString();
    Status rows_end = (*rows)->AwaitTermination();
    ASSERT_TRUE(rows_end.ok()) << rows_end.ToString();
    Status counts_end = (*counts)->AwaitTermination();
    ASSERT_TRUE(counts_end.ok()) << counts_end.ToString();
    ASSERT_FALSE((*rows)->Exception().has_value()) << (*rows)->Exception()->ToString();
    ASSERT_FALSE((*counts)->Exception().has_value()) << (*counts)->Exception()->ToString();
  };
  run();
  EXPECT_EQ(Sorted((*session)->ReadDelta(root + "/out/rows").Select({"id", "kind"})),
            (std::vector<std::string>{"1,click", "2,view", "3,click"}));
  EXPECT_EQ(Sorted((*session)->ReadDelta(root + "/out/counts")),
            (std::vector<std::string>{"click,2", "view,1"}));
  // A new file and a restart: only it is read, the state comes back from S3.
  ASSERT_TRUE(
      local->CreateIfAbsent(fs::JoinPath(landing, "c.json"), "{\"id\": 4, \"kind\": \"view\"}\n")
          .ok());
  run();
  EXPECT_EQ(Sorted((*session)->ReadDelta(root + "/out/rows").Select({"id", "kind"})),
            (std::vector<std::string>{"1,click", "2,view", "3,click", "4,view"}));
  EXPECT_EQ(Sorted((*session)->ReadDelta(root + "/out/counts")),
            (std::vector<std::string>{"click,2", "view,2"}));

  EXPECT_EQ(Names(s3, root + "/cp/rows/offsets"), (std::set<std::string>{"0", "1", "2"}));
  EXPECT_EQ(Names(s3, root + "/cp/rows/commits"), (std::set<std::string>{"0", "1", "2"}));
  EXPECT_EQ(Names(s3, root + "/cp/counts/commits"), (std::set<std::string>{"0", "1", "2"}));
  auto state = s3.ListRecursive(root + "/cp/counts/state");
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  bool changelog = false;
  for (const auto& f : *state) changelog |= f.path.ends_with(".changelog");
  EXPECT_TRUE(changelog);
  EXPECT_EQ(*s3.ReadFile(root + "/cp/counts/lock"), "");  // released
  // Nothing local but the cache (emptied when the query stopped) and the warehouse.
  EXPECT_TRUE(std::filesystem::is_empty(cwd));
  EXPECT_TRUE(std::filesystem::is_empty(dir.Join("cache/s3/" + bucket + "/cp/counts/_work")));
}

}  // namespace
}  // namespace sluice
