// RewriteSparkSql (dialect/spark_sql.h): the Spark spellings rewritten in a statement's text,
// checked as text (what the engine then runs is checked by test/sql/functions/*.test and
// test/sql/basics/spark_column_names.test).
#include "dialect/spark_sql.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/engine.h"
#include "engine/test_util.h"

namespace sluice::dialect {
namespace {

class SparkSqlTest : public engine::testing::EngineTest {
 protected:
  std::string Rewrite(const std::string& sql) {
    auto r = RewriteSparkSql(conn_.get(), sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? *r : std::string();
  }
};

TEST_F(SparkSqlTest, CastsToStringBecomeSparkString) {
  EXPECT_EQ(Rewrite("SELECT CAST(value AS STRING) FROM t"), "SELECT spark_string(value) FROM t");
  EXPECT_EQ(Rewrite("SELECT try_cast(value as string), cast(v AS VARCHAR(10)) FROM t"),
            "SELECT spark_string(value), spark_string(v) FROM t");
  EXPECT_EQ(Rewrite("SELECT CAST(CAST(v AS STRING) AS STRING)"),
            "SELECT spark_string(spark_string(v))");
  EXPECT_EQ(Rewrite("SELECT CAST(f(a, b) AS STRING), CAST(a AS INT)"),
            "SELECT spark_string(f(a, b)), CAST(spark_cast_input(a, 'INT') AS INT)");
  EXPECT_EQ(Rewrite("SELECT string(value), t.string(x)"),
            "SELECT spark_string(value), t.string(x)");
}

TEST_F(SparkSqlTest, CastsToBinaryBecomeSparkBinary) {
  EXPECT_EQ(Rewrite("SELECT CAST(s AS BINARY), s::binary, binary(s), TRY_CAST(s AS BINARY)"),
            "SELECT spark_binary(s), spark_binary(s), spark_binary(s), spark_binary(s)");
  EXPECT_EQ(Rewrite("SELECT CAST(CAST(s AS BINARY) AS STRING)"),
            "SELECT spark_string(spark_binary(s))");
}

TEST_F(SparkSqlTest, PostfixCastsWrapTheirOperand) {
  EXPECT_EQ(Rewrite("SELECT value::STRING"), "SELECT spark_string(value)");
  EXPECT_EQ(Rewrite("SELECT k.value::string, f(x, y)::STRING, (a || b)::STRING"),
            "SELECT spark_string(k.value), spark_string(f(x, y)), spark_string((a || b))");
  EXPECT_EQ(Rewrite("SELECT headers[3].value::VARCHAR, f(x).y::STRING, (a).b[1]::STRING"),
            "SELECT spark_string(spark_element(headers, 3).value), spark_string(f(x).y), "
            "spark_string(spark_element((a).b, 1))");
  EXPECT_EQ(Rewrite("SELECT x[1]::STRING, 5::STRING"),
            "SELECT spark_string(spark_element(x, 1)), spark_string(5)");
  EXPECT_EQ(Rewrite("SELECT X'4142'::STRING"), "SELECT spark_string(unhex('4142'))");
  // WHERE (...) is not a call.
  EXPECT_EQ(Rewrite("SELECT 1 WHERE (v)::STRING = 'a'"), "SELECT 1 WHERE spark_string((v)) = 'a'");
  // Other target types are the engine's; STRING[] is VARCHAR[].
  EXPECT_EQ(Rewrite("SELECT v::INT, v::STRING[]"),
            "SELECT spark_cast_input(v, 'INT')::INT, v::VARCHAR[]");
}

TEST_F(SparkSqlTest, BinaryLiterals) {
  EXPECT_EQ(Rewrite("SELECT X'7B22', x''"), "SELECT unhex('7B22'), unhex('')");
  EXPECT_EQ(Rewrite("SELECT x 'a'"), "SELECT x 'a'");  // not adjacent: an alias-like spelling
}

TEST_F(SparkSqlTest, OffsetAndWindowAreQuotedWhereAColumnNameStands) {
  EXPECT_EQ(Rewrite("SELECT partition, offset FROM t WHERE offset > 0 ORDER BY offset"),
            "SELECT partition, \"offset\" FROM t WHERE \"offset\" > 0 ORDER BY \"offset\"");
  EXPECT_EQ(Rewrite("SELECT max(offset) OVER (PARTITION BY window) FROM t"),
            "SELECT max(\"offset\") OVER (PARTITION BY \"window\") FROM t");
  EXPECT_EQ(Rewrite("SELECT o AS offset FROM t AS window"),
            "SELECT o AS \"offset\" FROM t AS \"window\"");
  EXPECT_EQ(Rewrite("CREATE TABLE t (offset BIGINT, window STRING)"),
            "CREATE TABLE t (\"offset\" BIGINT, \"window\" STRING)");
  // The clauses stay keywords; window(...) is the function (a batch statement's is the
  // engine's spark_window, windows.cc); t.offset needs nothing.
  EXPECT_EQ(Rewrite("SELECT a FROM t ORDER BY a LIMIT 2 OFFSET 1"),
            "SELECT a FROM t ORDER BY a NULLS FIRST LIMIT 2 OFFSET 1");
  EXPECT_EQ(Rewrite("SELECT a FROM t OFFSET 3"), "SELECT a FROM t OFFSET 3");
  EXPECT_EQ(Rewrite("SELECT sum(a) OVER w FROM t WINDOW w AS (PARTITION BY b)"),
            "SELECT sum(a) OVER w FROM t WINDOW w AS (PARTITION BY b)");
  EXPECT_EQ(Rewrite("SELECT window(ts, '1 minute'), t.offset FROM t"),
            "SELECT spark_window(ts, '1 minute'), t.offset FROM t");
}

TEST_F(SparkSqlTest, LiteralsCommentsAndQuotedNamesAreLeftAlone) {
  const std::string sql =
      "SELECT 'CAST(v AS STRING) offset', `offset`, `window` -- CAST(v AS STRING), "
      "offset\nFROM "
      "t";
  EXPECT_EQ(Rewrite(sql),
            "SELECT 'CAST(v AS STRING) offset', \"offset\", \"window\" -- CAST(v AS STRING), "
            "offset\nFROM t");
  EXPECT_EQ(Rewrite("SELECT 1 AS n"), "SELECT 1 AS n");
}

TEST_F(SparkSqlTest, DoubleQuotedTextIsAStringLiteral) {
  // Spark's default (spark.sql.ansi.doubleQuotedIdentifiers false): "g" is the string 'g'
  // wherever it stands; a name is quoted `g`.
  EXPECT_EQ(Rewrite("SELECT \"g\" AS v, `g` FROM t WHERE g = \"c\""),
            "SELECT 'g' AS v, \"g\" FROM t WHERE g = 'c'");
  EXPECT_EQ(Rewrite("SELECT upper(\"a\"), \"a\" || 'b', \"a\" 'b' \"c\""),
            "SELECT upper('a'), 'a' || 'b', 'abc'");
  // Backslash escapes as in '...'; a single quote inside is the engine's ''.
  EXPECT_EQ(Rewrite("SELECT \"it's\", \"a\\\"b\", \"x\\ty\""), "SELECT 'it''s', 'a\"b', 'x\ty'");
  // Typed literals, LIKE patterns, r"raw" strings.
  EXPECT_EQ(Rewrite("SELECT DATE\"2024-01-31\", TIMESTAMP\"2024-01-31 10:00:00\""),
            "SELECT DATE'2024-01-31', TIMESTAMP'2024-01-31 10:00:00'");
  EXPECT_EQ(Rewrite("SELECT s LIKE \"a%\" FROM t"), "SELECT s LIKE 'a%' FROM t");
  EXPECT_EQ(Rewrite("SELECT r\"\\d+\""), "SELECT '\\d+'");
}

TEST_F(SparkSqlTest, DoubleQuotedTextWhereANameStandsIsRefused) {
  // Spark refuses these; Sluice says why (such text meant a name when Sluice read "..." so).
  for (const char* sql :
       {"SELECT * FROM \"t\"", "SELECT 1 AS \"x\"", "SELECT a FROM t JOIN \"u\" ON true",
        "SELECT \"t\".a FROM t", "INSERT INTO \"t\" VALUES (1)", "CREATE TABLE \"t\" (a INT)"}) {
    auto r = RewriteSparkSql(conn_.get(), sql);
    ASSERT_FALSE(r.ok()) << sql;
    EXPECT_TRUE(r.status().IsInvalidArgument()) << sql;
    EXPECT_NE(r.status().message().find("is a string literal in Spark SQL, where a name stands"),
              std::string::npos)
        << r.status().message();
  }
  auto r = RewriteSparkSql(conn_.get(), "SELECT a\nFROM \"sales\"");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "\"sales\" at line 2, column 6 is a string literal in Spark SQL, where a name stands: "
            "quote a name with backquotes, `sales`");
  // In a call's arguments FROM is no table's: trim("x" FROM s), EXTRACT(YEAR FROM "...").
  EXPECT_EQ(Rewrite("SELECT trim(BOTH \"x\" FROM \"xax\"), EXTRACT(YEAR FROM \"2024-01-31\")"),
            "SELECT trim(BOTH 'x' FROM 'xax'), EXTRACT(YEAR FROM '2024-01-31')");
}

TEST_F(SparkSqlTest, TypedLiterals) {
  EXPECT_EQ(
      Rewrite("SELECT 5L, 5s, 5Y, 1.5D, 1.5F, 1.50BD, 0x10, 1e3"),
      "SELECT CAST(5 AS BIGINT), CAST(5 AS SMALLINT), CAST(5 AS TINYINT), CAST(1.5 AS DOUBLE), "
      "CAST(1.5 AS FLOAT), CAST('1.50' AS DECIMAL(3, 2)), 0x10, 1e3");
  EXPECT_EQ(Rewrite("SELECT 5 L"), "SELECT 5 L");  // an alias, not a suffix
  EXPECT_EQ(Rewrite("SELECT 5L::STRING"), "SELECT spark_string(CAST(5 AS BIGINT))");
}

TEST_F(SparkSqlTest, StringLiteralsReadAsSparkDoes) {
  EXPECT_EQ(Rewrite(R"(SELECT 'it\'s', 'a\nb', '\\d', r'\d+', 'a' 'b', '\%')"),
            "SELECT 'it''s', 'a\nb', '\\d', '\\d+', 'ab', '\\%'");
  EXPECT_EQ(Rewrite("SELECT 'plain', DATE'2024-01-15'"), "SELECT 'plain', DATE'2024-01-15'");
}

TEST_F(SparkSqlTest, TypeNamesAndCastChains) {
  EXPECT_EQ(
      Rewrite("SELECT CAST(x AS LONG), CAST(y AS ARRAY<STRING>), z::BYTE, '7'::INT::STRING"),
      "SELECT CAST(spark_cast_input(x, 'BIGINT') AS BIGINT), CAST(spark_cast_input(y, "
      "'VARCHAR[]') AS VARCHAR[]), "
      "spark_cast_input(z, 'TINYINT')::TINYINT, spark_string(spark_cast_input('7', 'INT')::INT)");
  EXPECT_EQ(Rewrite("SELECT CAST(m AS MAP<STRING, ARRAY<INT>>), TIMESTAMP_NTZ'2024-01-15 10:00'"),
            "SELECT CAST(spark_cast_input(m, 'MAP(VARCHAR, INT[])') AS MAP(VARCHAR, INT[])), "
            "TIMESTAMP'2024-01-15 10:00'");
}

TEST_F(SparkSqlTest, CollectionConstructors) {
  EXPECT_EQ(Rewrite("SELECT array(1, 2), array(), map('a', 1, 'b', 2)"),
            "SELECT list_value(1, 2), list_value(), MAP {'a': 1, 'b': 2}");
  EXPECT_EQ(Rewrite("SELECT struct(a, t.b, 1 AS x, 2), struct(a, 1), named_struct('k', v)"),
            "SELECT struct_pack(\"a\" := a, \"b\" := t.b, \"x\" := 1, \"col4\" := 2), "
            "struct_pack(\"a\" := a, \"col2\" := 1), struct_pack(\"k\" := v)");
  // Types stay types.
  EXPECT_EQ(Rewrite("SELECT CAST(x AS MAP(VARCHAR, INT)), CAST(y AS STRUCT(a INT))"),
            "SELECT CAST(spark_cast_input(x, 'MAP(VARCHAR, INT)') AS MAP(VARCHAR, INT)), "
            "CAST(spark_cast_input(y, 'STRUCT(a INT)') AS STRUCT(a INT))");
  EXPECT_EQ(Rewrite("SELECT concat(a, NULL, 'c'), concat()"),
            "SELECT ((a) || ( NULL) || ( 'c')), ''");
  auto named = RewriteSparkSql(conn_.get(), "SELECT named_struct(k, 1)");
  ASSERT_FALSE(named.ok());
  EXPECT_NE(named.status().message().find("string literals"), std::string::npos);
}

TEST_F(SparkSqlTest, HigherOrderFunctions) {
  EXPECT_EQ(Rewrite("SELECT filter(xs, x -> x > 1), count(*) FILTER (WHERE a)"),
            "SELECT list_filter(xs, \"x\" -> x > 1), count(*) FILTER (WHERE a)");
  // Spark's index counts from 0, the engine's from 1.
  EXPECT_EQ(Rewrite("SELECT transform(xs, (x, i) -> x + i)"),
            "SELECT list_transform(xs, (\"x\", \"i\") -> \"x\" + (\"i\" - 1))");
  EXPECT_EQ(Rewrite("SELECT aggregate(xs, 0, (acc, x) -> acc + x, acc -> acc * 10)"),
            "SELECT list_transform([list_reduce(xs, (\"acc\", \"x\") -> \"acc\" + \"x\", 0)], "
            "\"acc\" -> \"acc\" * 10)[1]");
  EXPECT_EQ(Rewrite("SELECT exists(xs, x -> x > 2), forall(xs, x -> x > 0)"),
            "SELECT spark_exists(list_transform(xs, \"x\" -> \"x\" > 2)), "
            "spark_forall(list_transform(xs, \"x\" -> \"x\" > 0))");
  // The arguments are rewritten too, and an outer lambda's index reaches inner lambdas.
  EXPECT_EQ(Rewrite("SELECT transform(array(xs), (ys, i) -> transform(ys, y -> y + i + 5L))"),
            "SELECT list_transform(list_value(xs), (\"ys\", \"i\") -> list_transform(\"ys\", "
            "\"y\" -> y + (\"i\" - 1) + CAST(5 AS BIGINT)))");
  const std::string zip = Rewrite("SELECT zip_with(a, b, (x, y) -> x + y)");
  EXPECT_EQ(zip.find("list_transform(list_zip(a, b), __z"), 7u) << zip;
  const std::string mf = Rewrite("SELECT map_filter(m, (k, v) -> v > 1)");
  EXPECT_NE(mf.find("map_from_entries(list_filter(map_entries(m), __e"), std::string::npos) << mf;
  EXPECT_NE(mf.find(".value > 1))"), std::string::npos) << mf;
  auto bad = RewriteSparkSql(conn_.get(), "SELECT aggregate(xs, 0, x -> x)");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("aggregate expects"), std::string::npos);
}

TEST_F(SparkSqlTest, SubscriptsCountFromZero) {
  EXPECT_EQ(Rewrite("SELECT xs[0], xs[i + 1][0], m['k'], xs[1:2], [1, 2], CAST(x AS INT[])"),
            "SELECT spark_element(xs, 0), spark_element(spark_element(xs, i + 1), 0), m['k'], "
            "xs[1:2], [1, 2], CAST(x AS INT[])");
  EXPECT_EQ(Rewrite("SELECT split(s, ',')[0], array(1, 2)[1]"),
            "SELECT spark_element(spark_split(s, ','), 0), spark_element(list_value(1, 2), 1)");
}

TEST_F(SparkSqlTest, LikeEscapesAndPropertyLists) {
  EXPECT_EQ(Rewrite(R"(SELECT 'a_b' LIKE 'a\_b', s NOT LIKE 'x\%y' ESCAPE '!', s LIKE 'a%')"),
            R"(SELECT 'a_b' LIKE 'a\_b' ESCAPE '\', s NOT LIKE 'x\%y' ESCAPE '!', s LIKE 'a%')");
  // 'k' 'v' in OPTIONS / TBLPROPERTIES are a key and a value, elsewhere one literal.
  EXPECT_EQ(Rewrite("CREATE STREAMING TABLE t TBLPROPERTIES ('k' 'v') OPTIONS ('a' 'b') AS "
                    "SELECT 'x' 'y'"),
            "CREATE STREAMING TABLE t TBLPROPERTIES ('k' 'v') OPTIONS ('a' 'b') AS SELECT 'xy'");
}

TEST_F(SparkSqlTest, GeneratorsAndRenames) {
  EXPECT_EQ(Rewrite("SELECT json_tuple(j, 'a', 'b') FROM docs"),
            "SELECT get_json_object(j, '$.' || 'a') AS c0, get_json_object(j, '$.' || 'b') AS c1 "
            "FROM docs");
  EXPECT_EQ(Rewrite("SELECT element_at(xs, 1), cardinality(xs), reverse(s), hash(s), "
                    "replace(s, 'b'), substring(s, 0, 3), replace(s, 'a', 'b')"),
            "SELECT spark_element_at(xs, 1), size(xs), spark_reverse(s), spark_hash(s), "
            "spark_replace(s, 'b'), spark_substring(s, 0, 3), replace(s, 'a', 'b')");
}

TEST_F(SparkSqlTest, RenamesOfReservedNames) {
  EXPECT_EQ(Rewrite("SELECT some(k > 2), any(b), char(97), x = ANY (SELECT 1)"),
            "SELECT bool_or(k > 2), bool_or(b), chr(97), x = ANY (SELECT 1)");
}

TEST_F(SparkSqlTest, JsonPathsOfParseJson) {
  EXPECT_EQ(Rewrite("SELECT parse_json(j):a::INT, parse_json(j):d.e, parse_json(j):c[0]::STRING"),
            "SELECT json_extract(j, '$.a')::INT, json_extract(j, '$.d.e'), "
            "json_extract_string(j, '$.c[0]')");
  EXPECT_EQ(Rewrite("SELECT parse_json(j):items[1].q::LONG, j:a"),
            "SELECT json_extract(j, '$.items[1].q')::BIGINT, j:a");
}

TEST_F(SparkSqlTest, RlikeAndLateralView) {
  EXPECT_EQ(Rewrite("SELECT s RLIKE '^a', CAST(v AS STRING) NOT RLIKE p FROM t"),
            "SELECT regexp_matches(s, '^a'), NOT regexp_matches(spark_string(v), p) FROM t");
  EXPECT_EQ(Rewrite("SELECT id, t.v FROM n LATERAL VIEW explode(tags) t AS v"),
            "SELECT id, t.v FROM n CROSS JOIN LATERAL (SELECT unnest(tags) AS \"v\") AS \"t\"");
  EXPECT_EQ(Rewrite("SELECT id FROM n LATERAL VIEW OUTER explode(tags) t v"),
            "SELECT id FROM n LEFT JOIN LATERAL (SELECT unnest(tags) AS \"v\") AS \"t\" ON TRUE");
}

TEST_F(SparkSqlTest, Clauses) {
  EXPECT_EQ(Rewrite("SELECT * FROM a LEFT SEMI JOIN b ON a.k = b.k LEFT ANTI JOIN c ON a.k = c.k"),
            "SELECT * FROM a SEMI JOIN b ON a.k = b.k ANTI JOIN c ON a.k = c.k");
  EXPECT_EQ(Rewrite("SELECT g FROM t DISTRIBUTE BY g SORT BY g"),
            "SELECT g FROM t  ORDER BY g NULLS FIRST");
  EXPECT_EQ(Rewrite("SELECT g FROM t CLUSTER BY g"), "SELECT g FROM t ORDER BY g NULLS FIRST");
  EXPECT_EQ(Rewrite("SELECT g FROM t MINUS SELECT 'a'"), "SELECT g FROM t EXCEPT SELECT 'a'");
  EXPECT_EQ(Rewrite("SELECT * EXCEPT (a, b) FROM t"), "SELECT * EXCLUDE (a, b) FROM t");
  EXPECT_EQ(Rewrite("SELECT * FROM t EXCEPT (SELECT * FROM u)"),
            "SELECT * FROM t EXCEPT (SELECT * FROM u)");
  EXPECT_EQ(Rewrite("SELECT 7 div 2, i div -2"), "SELECT 7 // 2, i // -2");
}

TEST_F(SparkSqlTest, ExpressionsAlone) {
  auto r = RewriteSparkExpression(conn_.get(), "offset div 2");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "\"offset\" // 2");
}

}  // namespace
}  // namespace sluice::dialect
