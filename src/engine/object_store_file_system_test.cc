#include <gtest/gtest.h>

#include <string>

#include "engine/engine.h"
#include "engine/test_util.h"

namespace sluice::engine {
namespace {

using ObjectStoreFileSystemTest = testing::EngineTest;

// A scheme Sluice does not serve gets Sluice's refusal naming it (not DuckDB's "install
// httpfs" hint), for reads, globs and writes alike; "file:" stays DuckDB's own.
TEST_F(ObjectStoreFileSystemTest, UnsupportedSchemesAreRefusedByName) {
  for (const std::string scheme : {"gs", "s3a", "abfss", "https", "hf"}) {
    const std::string path = scheme + "://bucket/t/part-0.parquet";
    Result<Batch> read = conn_->ReadParquet({path});
    ASSERT_FALSE(read.ok()) << scheme;
    EXPECT_TRUE(read.status().IsNotSupported()) << read.status().ToString();
    EXPECT_NE(read.status().message().find("scheme '" + scheme + "' is not supported"),
              std::string::npos)
        << read.status().ToString();
    Result<Batch> glob = conn_->Query("SELECT * FROM read_json('" + scheme + "://bucket/*.json')");
    ASSERT_FALSE(glob.ok()) << scheme;
    EXPECT_NE(glob.status().message().find("scheme '" + scheme + "'"), std::string::npos)
        << glob.status().ToString();
    Status write = conn_->Execute("COPY (SELECT 1 AS x) TO '" + path + "' (FORMAT parquet)");
    ASSERT_FALSE(write.ok()) << scheme;
    EXPECT_NE(write.message().find("scheme '" + scheme + "' is not supported"), std::string::npos)
        << write.ToString();
  }
}

TEST_F(ObjectStoreFileSystemTest, LocalPathsStayDuckDbs) {
  testing::TempDir dir;
  const std::string path = dir.File("a.parquet");
  ASSERT_TRUE(conn_->Execute("COPY (SELECT 7 AS x) TO '" + path + "' (FORMAT parquet)").ok());
  EXPECT_EQ(Scalar("SELECT x FROM read_parquet('" + path + "')"), "7");
  EXPECT_EQ(Scalar("SELECT x FROM read_parquet('file://" + path + "')"), "7");
}

}  // namespace
}  // namespace sluice::engine
