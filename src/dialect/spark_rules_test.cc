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

TEST_F(SparkRulesTest, DivisionAndRemainderTakeSparksOperands) {
  EXPECT_EQ(Rewrite("SELECT 1 / 0, 7 % 0"), "SELECT spark_divide(1 , 0), spark_remainder(7 , 0)");
  // Left to right: the left operand takes the * / % before it, prefix signs and postfixes.
  EXPECT_EQ(Rewrite("SELECT a / b / c, a * b / c, a / b * c, -7 % 3 FROM t"),
            "SELECT spark_divide(spark_divide(a , b) , c), spark_divide(a * b , c), spark_divide(a "
            ", b) * c, spark_remainder(-7 , 3) FROM t");
  EXPECT_EQ(Rewrite("SELECT a % b / c, a + b / -c, a - b % c FROM t"),
            "SELECT spark_divide(spark_remainder(a , b) , c), a + spark_divide(b , -c), a - "
            "spark_remainder(b , c) FROM t");
  EXPECT_EQ(Rewrite("SELECT t.x[1].y / f(a, b)::DOUBLE, (a + b) / 2, sum(v) / count(*) FROM t"),
            "SELECT spark_divide(spark_element(t.x, 1).y , spark_cast_input(f(a, b), "
            "'DOUBLE')::DOUBLE), "
            "spark_divide((a + b) , 2), "
            "spark_divide(sum(v) , count(*)) FROM t");
  EXPECT_EQ(Rewrite("SELECT CASE WHEN a THEN 1 ELSE 2 END / 2, v / CASE WHEN a THEN 1 END FROM t"),
            "SELECT spark_divide(CASE WHEN a THEN 1 ELSE 2 END , 2), spark_divide(v , CASE WHEN a "
            "THEN 1 END) FROM t");
  EXPECT_EQ(Rewrite("SELECT v / sum(v) OVER (PARTITION BY g), sum(v) OVER w / 2 FROM t"),
            "SELECT spark_divide(v , sum(v) OVER (PARTITION BY g)), spark_divide(sum(v) OVER w , "
            "2) FROM t");
  EXPECT_EQ(Rewrite("SELECT 10L / 4, 1.0D % 2, 1.50BD / 3"),
            "SELECT spark_divide(CAST(10 AS BIGINT) , 4), spark_remainder(CAST(1.0 AS DOUBLE) , "
            "2), spark_divide(CAST('1.50' AS DECIMAL(3, 2)) , 3)");
  // Nested with the other rules: casts, xor (looser than /), NULLS FIRST after the operand.
  EXPECT_EQ(Rewrite("SELECT s::INT / 2, a / b ^ c, a ^ b / c FROM t ORDER BY a / b"),
            "SELECT spark_divide(spark_cast_input(s, 'INT')::INT , 2), xor(spark_divide(a , b) , "
            "c), xor(a , spark_divide(b , c)) FROM t ORDER BY spark_divide(a , b) NULLS FIRST");
  // Not an operator of two operands: left to the engine.
  EXPECT_EQ(Rewrite("SELECT a // b, count(*) FROM t USING SAMPLE 10%"),
            "SELECT a // b, count(*) FROM t USING SAMPLE 10%");
  EXPECT_EQ(Rewrite("SELECT 'a/b', x FROM read_parquet('/d/*.parquet') WHERE s LIKE '%a'"),
            "SELECT 'a/b', x FROM read_parquet('/d/*.parquet') WHERE s LIKE '%a'");
}

TEST_F(SparkRulesTest, BatchWindowsAreTheEnginesFunction) {
  EXPECT_EQ(Rewrite("SELECT window(ts, '10 minutes').start AS s FROM t"),
            "SELECT spark_window(ts, '10 minutes').start AS s FROM t");
  // GROUP BY window(...) names the group `window`; rows without a time are in no window.
  EXPECT_EQ(Rewrite("SELECT window.start AS s, count(*) FROM t GROUP BY window(ts, '1 hour') "
                    "ORDER BY s"),
            "SELECT spark_window(ts, '1 hour').start AS s, count(*) FROM t GROUP BY "
            "spark_window(ts, '1 hour') HAVING spark_window(ts, '1 hour') IS NOT NULL ORDER BY s "
            "NULLS FIRST");
  EXPECT_EQ(Rewrite("SELECT g, window FROM t GROUP BY g, window(`ts`, '1 day') HAVING count(*) > 1 "
                    "OR g = 'a'"),
            "SELECT g, spark_window(\"ts\", '1 day') AS \"window\" FROM t GROUP BY g, "
            "spark_window(\"ts\", "
            "'1 day') HAVING spark_window(\"ts\", '1 day') IS NOT NULL AND ( count(*) > 1 OR g = "
            "'a')");
  // A column named window, and WINDOW w AS (...), stay.
  EXPECT_EQ(Rewrite("SELECT window FROM kw"), "SELECT \"window\" FROM kw");
  EXPECT_EQ(Rewrite("SELECT sum(v) OVER w FROM t WINDOW w AS (PARTITION BY g)"),
            "SELECT sum(v) OVER w FROM t WINDOW w AS (PARTITION BY g)");
  // A streaming statement keeps window(...) for the streaming planner (names.cc quotes the
  // column window as before); so does an expression.
  EXPECT_EQ(Rewrite("CREATE STREAMING TABLE c AS SELECT window.start, count(*) FROM STREAM src "
                    "GROUP BY window(ts, '1 hour')"),
            "CREATE STREAMING TABLE c AS SELECT \"window\".start, count(*) FROM STREAM src GROUP "
            "BY window(ts, '1 hour')");
  auto e = RewriteSparkExpression(conn_.get(), "window(ts, '1 hour')");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(*e, "window(ts, '1 hour')");
}

}  // namespace
}  // namespace sluice::dialect

namespace sluice::dialect {
namespace {

// Spark's range() as a relation names its column `id` (the engine's is `range`); its fourth
// argument, the partition count, is dropped; range as a column or function name is left.
TEST_F(SparkRulesTest, RangeInFromIsASubqueryNamingItsColumnId) {
  EXPECT_EQ(Rewrite("SELECT id FROM range(3)"),
            "SELECT id FROM (SELECT range AS id FROM range(3))");
  EXPECT_EQ(Rewrite("SELECT t.id FROM range(1, 10, 2, 4) AS t"),
            "SELECT t.id FROM (SELECT range AS id FROM range(1, 10, 2)) AS t");
  EXPECT_EQ(Rewrite("SELECT * FROM t JOIN range(2) r ON r.id = t.k"),
            "SELECT * FROM t JOIN (SELECT range AS id FROM range(2)) r ON r.id = t.k");
  EXPECT_EQ(Rewrite("SELECT range FROM t"), "SELECT range FROM t");
  // A statement written for the engine's range() (its column `range`) keeps its meaning.
  EXPECT_EQ(Rewrite("SELECT range AS id, 'r' || range AS s FROM range(10)"),
            "SELECT range AS id, 'r' || range AS s FROM range(10)");
  EXPECT_EQ(Rewrite("SELECT sum(id) OVER (ORDER BY id RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) "
                    "FROM range(3)"),
            "SELECT sum(id) OVER (ORDER BY id NULLS FIRST RANGE BETWEEN 1 PRECEDING AND CURRENT "
            "ROW) FROM (SELECT range AS id FROM range(3))");
}

}  // namespace
}  // namespace sluice::dialect
