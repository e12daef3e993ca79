// What the fuzz targets of test/fuzz found, each reproduced through the public entry point a user
// reaches (docs/testing.md, "Fuzzing"). The inputs are also in the targets' corpora, so that the
// replay in `make test` keeps running them.
#include <gtest/gtest.h>

#include <string>

#include "dialect/spark_sql.h"
#include "engine/engine.h"

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

}  // namespace
}  // namespace sluice
