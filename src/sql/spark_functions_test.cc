// RewriteSparkFunctions (spark_functions.h): the Spark spellings rewritten in a statement's text,
// checked as text (what the engine then runs is checked by test/sql/functions/*.test and
// test/sql/basics/spark_column_names.test).
#include "sql/spark_functions.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/engine.h"
#include "engine/test_util.h"

namespace sluice::sql {
namespace {

class SparkFunctionsTest : public engine::testing::EngineTest {
 protected:
  std::string Rewrite(const std::string& sql) {
    auto r = RewriteSparkFunctions(conn_.get(), sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? *r : std::string();
  }
};

TEST_F(SparkFunctionsTest, CastsToStringBecomeSparkString) {
  EXPECT_EQ(Rewrite("SELECT CAST(value AS STRING) FROM t"), "SELECT spark_string(value) FROM t");
  EXPECT_EQ(Rewrite("SELECT try_cast(value as string), cast(v AS VARCHAR(10)) FROM t"),
            "SELECT spark_string(value), spark_string(v) FROM t");
  EXPECT_EQ(Rewrite("SELECT CAST(CAST(v AS STRING) AS STRING)"),
            "SELECT spark_string(spark_string(v))");
  EXPECT_EQ(Rewrite("SELECT CAST(f(a, b) AS STRING), CAST(a AS INT)"),
            "SELECT spark_string(f(a, b)), CAST(a AS INT)");
  EXPECT_EQ(Rewrite("SELECT string(value), t.string(x)"),
            "SELECT spark_string(value), t.string(x)");
}

TEST_F(SparkFunctionsTest, CastsToBinaryBecomeSparkBinary) {
  EXPECT_EQ(Rewrite("SELECT CAST(s AS BINARY), s::binary, binary(s), TRY_CAST(s AS BINARY)"),
            "SELECT spark_binary(s), spark_binary(s), spark_binary(s), spark_binary(s)");
  EXPECT_EQ(Rewrite("SELECT CAST(CAST(s AS BINARY) AS STRING)"),
            "SELECT spark_string(spark_binary(s))");
}

TEST_F(SparkFunctionsTest, PostfixCastsWrapTheirOperand) {
  EXPECT_EQ(Rewrite("SELECT value::STRING"), "SELECT spark_string(value)");
  EXPECT_EQ(Rewrite("SELECT k.value::string, f(x, y)::STRING, (a || b)::STRING"),
            "SELECT spark_string(k.value), spark_string(f(x, y)), spark_string((a || b))");
  EXPECT_EQ(Rewrite("SELECT headers[3].value::VARCHAR, f(x).y::STRING, (a).b[1]::STRING"),
            "SELECT spark_string(headers[3].value), spark_string(f(x).y), "
            "spark_string((a).b[1])");
  EXPECT_EQ(Rewrite("SELECT x[1]::STRING, 5::STRING"),
            "SELECT spark_string(x[1]), spark_string(5)");
  EXPECT_EQ(Rewrite("SELECT X'4142'::STRING"), "SELECT spark_string(unhex('4142'))");
  // WHERE (...) is not a call.
  EXPECT_EQ(Rewrite("SELECT 1 WHERE (v)::STRING = 'a'"), "SELECT 1 WHERE spark_string((v)) = 'a'");
  // Other target types and array types are the engine's.
  EXPECT_EQ(Rewrite("SELECT v::INT, v::STRING[]"), "SELECT v::INT, v::STRING[]");
}

TEST_F(SparkFunctionsTest, BinaryLiterals) {
  EXPECT_EQ(Rewrite("SELECT X'7B22', x''"), "SELECT unhex('7B22'), unhex('')");
  EXPECT_EQ(Rewrite("SELECT x 'a'"), "SELECT x 'a'");  // not adjacent: an alias-like spelling
}

TEST_F(SparkFunctionsTest, OffsetAndWindowAreQuotedWhereAColumnNameStands) {
  EXPECT_EQ(Rewrite("SELECT partition, offset FROM t WHERE offset > 0 ORDER BY offset"),
            "SELECT partition, \"offset\" FROM t WHERE \"offset\" > 0 ORDER BY \"offset\"");
  EXPECT_EQ(Rewrite("SELECT max(offset) OVER (PARTITION BY window) FROM t"),
            "SELECT max(\"offset\") OVER (PARTITION BY \"window\") FROM t");
  EXPECT_EQ(Rewrite("SELECT o AS offset FROM t AS window"),
            "SELECT o AS \"offset\" FROM t AS \"window\"");
  EXPECT_EQ(Rewrite("CREATE TABLE t (offset BIGINT, window STRING)"),
            "CREATE TABLE t (\"offset\" BIGINT, \"window\" STRING)");
  // The clauses stay keywords; window(...) stays the function; t.offset needs nothing.
  EXPECT_EQ(Rewrite("SELECT a FROM t ORDER BY a LIMIT 2 OFFSET 1"),
            "SELECT a FROM t ORDER BY a LIMIT 2 OFFSET 1");
  EXPECT_EQ(Rewrite("SELECT a FROM t OFFSET 3"), "SELECT a FROM t OFFSET 3");
  EXPECT_EQ(Rewrite("SELECT sum(a) OVER w FROM t WINDOW w AS (PARTITION BY b)"),
            "SELECT sum(a) OVER w FROM t WINDOW w AS (PARTITION BY b)");
  EXPECT_EQ(Rewrite("SELECT window(ts, '1 minute'), t.offset FROM t"),
            "SELECT window(ts, '1 minute'), t.offset FROM t");
}

TEST_F(SparkFunctionsTest, LiteralsCommentsAndQuotedNamesAreLeftAlone) {
  const std::string sql =
      "SELECT 'CAST(v AS STRING) offset', \"offset\", `window` -- CAST(v AS STRING), offset\nFROM "
      "t";
  EXPECT_EQ(Rewrite(sql), sql);
  EXPECT_EQ(Rewrite("SELECT 1 AS n"), "SELECT 1 AS n");
}

}  // namespace
}  // namespace sluice::sql
