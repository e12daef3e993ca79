// The rules of the Spark dialect for names, clauses, casts and datetime units (names.cc,
// clauses.cc, casts.cc, datetime.cc), checked as text; what the engine then computes is checked
// by engine/spark_casts_test.cc and the SQL differential (test/differential/sql).
#include <gtest/gtest.h>

#include <string>

#include "dialect/spark_sql.h"
#include "engine/engine.h"
#include "engine/test_util.h"

namespace sluice::dialect {
namespace {

class SparkRulesTest : public engine::testing::EngineTest {
 protected:
  std::string Rewrite(const std::string& sql) {
    auto r = RewriteSparkSql(conn_.get(), sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? *r : std::string();
  }
};

TEST_F(SparkRulesTest, BackquotedNamesAreQuoted) {
  EXPECT_EQ(Rewrite("SELECT `order`, `a-b`, `x.y` AS `my col`, `a``b` FROM `t` AS `s`"),
            "SELECT \"order\", \"a-b\", \"x.y\" AS \"my col\", \"a`b\" FROM \"t\" AS \"s\"");
  // The path forms of a table stay for the front end.
  EXPECT_EQ(Rewrite("SELECT * FROM delta.`/tmp/t`, parquet.`/p` JOIN u ON u.`k` = 1"),
            "SELECT * FROM delta.`/tmp/t`, parquet.`/p` JOIN u ON u.\"k\" = 1");
  EXPECT_EQ(Rewrite("SELECT * FROM read_kafka(`kafka.client.id` => 'x')"),
            "SELECT * FROM read_kafka(`kafka.client.id` => 'x')");
}

TEST_F(SparkRulesTest, OffsetAsASubqueryAlias) {
  EXPECT_EQ(Rewrite("SELECT offset.x FROM (SELECT 1 AS x) offset"),
            "SELECT \"offset\".x FROM (SELECT 1 AS x) \"offset\"");
  EXPECT_EQ(Rewrite("SELECT a FROM (SELECT 1 AS a) LIMIT (1) OFFSET 2"),
            "SELECT a FROM (SELECT 1 AS a) LIMIT (1) OFFSET 2");
}

TEST_F(SparkRulesTest, AscendingOrderPutsNullsFirst) {
  EXPECT_EQ(Rewrite("SELECT v FROM t ORDER BY v"), "SELECT v FROM t ORDER BY v NULLS FIRST");
  EXPECT_EQ(Rewrite("SELECT v FROM t ORDER BY v DESC, f(a, b) ASC, c NULLS LAST LIMIT 2"),
            "SELECT v FROM t ORDER BY v DESC, f(a, b) ASC NULLS FIRST, c NULLS LAST LIMIT 2");
  EXPECT_EQ(Rewrite("SELECT rank() OVER (PARTITION BY g ORDER BY v) FROM t"),
            "SELECT rank() OVER (PARTITION BY g ORDER BY v NULLS FIRST) FROM t");
  EXPECT_EQ(Rewrite("SELECT v FROM t SORT BY v"), "SELECT v FROM t ORDER BY v NULLS FIRST");
}

TEST_F(SparkRulesTest, NullSafeEqualityAndXor) {
  EXPECT_EQ(Rewrite("SELECT a <=> b FROM t"), "SELECT a IS NOT DISTINCT FROM b FROM t");
  EXPECT_EQ(Rewrite("SELECT 12 ^ 10"), "SELECT xor(12 , 10)");
  EXPECT_EQ(Rewrite("SELECT a + 1 ^ b * 2 v, f(x ^ y), a ^ b ^ c FROM t WHERE a ^ b = 3"),
            "SELECT xor(a + 1 , b * 2) v, f(xor(x , y)), xor(xor(a , b) , c) FROM t WHERE xor(a , "
            "b) = 3");
}

TEST_F(SparkRulesTest, CastsReadTheirInputAsSpark) {
  EXPECT_EQ(Rewrite("SELECT CAST(d AS INT), TRY_CAST(s AS DATE), CAST(x AS LONG)"),
            "SELECT CAST(spark_cast_input(d, 'INT') AS INT), TRY_CAST(spark_try_cast_input(s, "
            "'DATE') AS DATE), CAST(spark_cast_input(x, 'BIGINT') AS BIGINT)");
  EXPECT_EQ(Rewrite("SELECT '12'::INT, '7'::INT::STRING, s::TIMESTAMP"),
            "SELECT spark_cast_input('12', 'INT')::INT, spark_string(spark_cast_input('7', "
            "'INT')::INT), spark_cast_input(s, 'TIMESTAMP')::TIMESTAMP");
  // Other targets are the engine's casts.
  EXPECT_EQ(Rewrite("SELECT CAST(x AS DECIMAL(10, 2)), x::BOOLEAN"),
            "SELECT CAST(x AS DECIMAL(10, 2)), x::BOOLEAN");
}

TEST_F(SparkRulesTest, DatetimeUnits) {
  EXPECT_EQ(Rewrite("SELECT dateadd(DAY, 3, d), timestampdiff(MINUTE, a, b), datediff(a, b)"),
            "SELECT spark_timestampadd('DAY', 3, d), spark_timestampdiff('MINUTE', a, b), "
            "spark_datediff(a, b)");
  EXPECT_EQ(Rewrite("SELECT EXTRACT(SECOND FROM ts), EXTRACT(YEAR FROM ts)"),
            "SELECT spark_second_with_fraction( ts), EXTRACT(YEAR FROM ts)");
  EXPECT_EQ(Rewrite("SELECT DATE'2024-01-31' + INTERVAL 1 MONTH, d - INTERVAL '2' YEAR, "
                    "ts + INTERVAL 1 HOUR"),
            "SELECT spark_add_months_interval(DATE'2024-01-31' , INTERVAL 1 MONTH), "
            "spark_add_months_interval(d , - INTERVAL '2' YEAR), ts + INTERVAL 1 HOUR");
}

}  // namespace
}  // namespace sluice::dialect
