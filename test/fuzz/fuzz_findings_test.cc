// What the fuzz targets of test/fuzz found, each reproduced through the public entry point a user
// reaches (docs/testing.md, "Fuzzing"). The inputs are also in the targets' corpora, so that the
// replay in `make test` keeps running them.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "delta/log_segment.h"
#include "delta/table.h"
#include "dialect/spark_sql.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice {
namespace {

// pipeline_sql_fuzzer, first run: from_json with a schema holding bytes that are not UTF-8 threw
// nlohmann's type_error out of RewriteSparkSql, and `sluice sql "SELECT from_json('{}', '\xe1
// INT')"` aborted (exit 134). The bytes become U+FFFD, as Spark decodes its SQL text.
TEST(FuzzFindingsTest, FromJsonSchemaNotUtf8) {
  auto engine = engine::Engine::Open();
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  auto conn = (*engine)->Connect();
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  auto sql = dialect::RewriteSparkSql(conn->get(), "SELECT from_json('{}', '\xe1 INT') AS x");
  ASSERT_TRUE(sql.ok()) << sql.status().ToString();
  EXPECT_NE(sql->find("\xef\xbf\xbd"), std::string::npos) << *sql;  // U+FFFD
  auto rows = (*conn)->Query(*sql);
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
}

// delta_checkpoint_meta_fuzzer, run 2,388: a _delta_log file named with 20 digits above int64's
// range (80000000000000000013.json) overflowed ParseLogFileName, so the table was refused with a
// version no file has ("versions are not contiguous: [0, 6213023705161793549]"). No Delta writer
// reaches such a version (versions are longs): the name is ignored like other foreign files.
TEST(FuzzFindingsTest, DeltaLogNameAboveInt64IsIgnored) {
  EXPECT_FALSE(delta::ParseLogFileName("80000000000000000013.json"));
  EXPECT_FALSE(delta::ParseLogFileName("99999999999999999999.checkpoint.parquet"));
  auto max = delta::ParseLogFileName("09223372036854775807.json");
  ASSERT_TRUE(max);
  EXPECT_EQ(max->version.value(), INT64_MAX);
  // The part numbers are int32 in Delta's writers; 10 digits may exceed them.
  EXPECT_FALSE(
      delta::ParseLogFileName("00000000000000000005.checkpoint.4294967297.4294967298.parquet"));
  EXPECT_TRUE(
      delta::ParseLogFileName("00000000000000000005.checkpoint.2147483647.2147483647.parquet"));

  char tmpl[] = "/tmp/sluice-fuzz-finding-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  const std::string log = root + "/_delta_log";
  std::filesystem::create_directories(log);
  const std::string commit0 =
      R"({"protocol":{"minReaderVersion":1,"minWriterVersion":2}})"
      "\n"
      R"({"metaData":{"id":"t","format":{"provider":"parquet","options":{}},)"
      R"("schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",)"
      R"(\"type\":\"integer\",\"nullable\":true,\"metadata\":{}}]}",)"
      R"("partitionColumns":[],"configuration":{},"createdTime":0}})"
      "\n";
  std::ofstream(log + "/00000000000000000000.json") << commit0;
  std::ofstream(log + "/80000000000000000013.json") << commit0;
  auto engine = engine::Engine::Open();
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  auto table = delta::DeltaTable::Open(fs::LocalFileSystem(), engine->get(), root);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto snap = (*table)->Latest();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ((*snap)->version.value(), 0);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace sluice
