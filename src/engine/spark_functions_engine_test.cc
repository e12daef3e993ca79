// The Spark functions of the engine (spark_datetime.h, spark_json.h, spark_collections.h,
// spark_scalars.h). The Spark answers in the comments are those of Spark 4 (the SQL differential,
// test/differential/sql, compares the same functions against Spark itself).
#include <gtest/gtest.h>

#include "engine/test_util.h"

namespace sluice::engine {
namespace {

class SparkFunctionsEngineTest : public testing::EngineTest {
 protected:
  // The error message of `sql`, which must fail.
  std::string Error(const std::string& sql) {
    auto r = conn_->Query(sql);
    EXPECT_FALSE(r.ok()) << sql;
    return r.ok() ? std::string() : r.status().message();
  }
};

TEST_F(SparkFunctionsEngineTest, DateFormatUsesSparkPatternLetters) {
  const std::string ts = "TIMESTAMP '2024-01-15 15:04:05.123456'";
  EXPECT_EQ(Scalar("SELECT date_format(" + ts + ", 'yyyy-MM-dd HH:mm:ss')"), "2024-01-15 15:04:05");
  EXPECT_EQ(Scalar("SELECT date_format(" + ts + ", 'hh:mm a')"), "03:04 PM");
  EXPECT_EQ(Scalar("SELECT date_format(" + ts + ", 'ss.SSS / SSSSSS')"), "05.123 / 123456");
  EXPECT_EQ(Scalar("SELECT date_format(" + ts + ", 'y-M-d H:m:s')"), "2024-1-15 15:4:5");
  EXPECT_EQ(Scalar("SELECT date_format(" + ts + ", 'yy MMM MMMM EEE EEEE D QQ')"),
            "24 Jan January Mon Monday 15 01");
  EXPECT_EQ(Scalar("SELECT date_format(" + ts + ", 'yyyy-MM-dd''T''HH:mm:ssXXX')"),
            "2024-01-15T15:04:05Z");
  EXPECT_EQ(Scalar("SELECT date_format(" + ts + ", '''o''''clock'' %')"), "o'clock %");
  EXPECT_EQ(Scalar("SELECT date_format(DATE '2024-02-01', 'dd/MM/yyyy')"), "01/02/2024");
  EXPECT_EQ(Scalar("SELECT date_format('2024-01-15', 'yyyy/MM/dd')"), "2024/01/15");
  EXPECT_EQ(Scalar("SELECT date_format(NULL::TIMESTAMP, 'yyyy')"), "NULL");
}

TEST_F(SparkFunctionsEngineTest, DateFormatRefusesWhatItCannotPrint) {
  EXPECT_NE(Error("SELECT date_format(TIMESTAMP '2024-01-15', 'YYYY-ww')").find("week-based"),
            std::string::npos);
  EXPECT_NE(Error("SELECT date_format(TIMESTAMP '2024-01-15', 'yyyy[-MM]')").find("'['"),
            std::string::npos);
  EXPECT_NE(Error("SELECT date_format(TIMESTAMP '2024-01-15', 'yyyy''x')").find("unterminated"),
            std::string::npos);
  ASSERT_TRUE(conn_->Query("SET TimeZone = 'Europe/Paris'").ok());
  EXPECT_NE(Error("SELECT date_format(TIMESTAMP '2024-01-15', 'XXX')").find("UTC"),
            std::string::npos);
}

TEST_F(SparkFunctionsEngineTest, ParsingWithPatterns) {
  EXPECT_EQ(Scalar("SELECT spark_strptime_format('dd/MM/yyyy HH:mm:ss.SSS ''T'' %')"),
            "%d/%m/%Y %H:%M:%S.%g T %%");
  EXPECT_EQ(Scalar("SELECT spark_to_timestamp('15/01/2024 10:30', 'dd/MM/yyyy HH:mm')"),
            "2024-01-15 10:30:00+00");  // an instant, as Spark's TIMESTAMP
  EXPECT_EQ(Scalar("SELECT to_date('20240115', 'yyyyMMdd')"), "2024-01-15");
  EXPECT_EQ(Scalar("SELECT to_date(TIMESTAMP '2024-01-15 23:30:00')"), "2024-01-15");
  EXPECT_EQ(Scalar("SELECT unix_timestamp('2024/01/15', 'yyyy/MM/dd')"), "1705276800");
  EXPECT_EQ(Scalar("SELECT unix_timestamp(TIMESTAMP '1970-01-02 00:00:00')"), "86400");
  EXPECT_EQ(Scalar("SELECT from_unixtime(1705314645, 'yyyy-MM-dd')"), "2024-01-15");
  EXPECT_EQ(Scalar("SELECT try_to_timestamp('garbage')"), "NULL");
  // Spark (ANSI) fails on text that does not fit the pattern; so does Sluice.
  EXPECT_FALSE(conn_->Query("SELECT to_date('31/12/2023', 'yyyy-MM-dd')").ok());
}

TEST_F(SparkFunctionsEngineTest, EpochConversions) {
  EXPECT_EQ(Scalar("SELECT unix_micros(timestamp_seconds(1.5))"), "1500000");
  EXPECT_EQ(Scalar("SELECT unix_millis(timestamp_millis(1705314645123))"), "1705314645123");
  EXPECT_EQ(Scalar("SELECT unix_seconds(timestamp_micros(-1))"), "-1");  // floor, as Spark
  EXPECT_EQ(Scalar("SELECT unix_date(DATE '1970-01-11')"), "10");
  EXPECT_EQ(Scalar("SELECT date_from_unix_date(10)"), "1970-01-11");
}

TEST_F(SparkFunctionsEngineTest, CalendarFunctions) {
  EXPECT_EQ(Scalar("SELECT months_between(TIMESTAMP '2024-03-15', TIMESTAMP '2024-01-15')"), "2.0");
  EXPECT_EQ(Scalar("SELECT months_between(DATE '2024-03-01', DATE '2024-01-15')"), "1.5483871");
  EXPECT_EQ(Scalar("SELECT add_months(DATE '2024-01-31', 1)"), "2024-02-29");
  EXPECT_EQ(Scalar("SELECT next_day(DATE '2024-01-15', 'Friday')"), "2024-01-19");
  EXPECT_NE(Error("SELECT next_day(DATE '2024-01-15', 'Someday')").find("not a day of the week"),
            std::string::npos);
  EXPECT_EQ(Scalar("SELECT spark_datediff(DATE '2024-03-01', DATE '2024-02-01')"), "29");
  EXPECT_EQ(Scalar("SELECT spark_date_sub(DATE '2024-03-01', 1)"), "2024-02-29");
  EXPECT_EQ(Scalar("SELECT spark_trunc(DATE '2024-05-15', 'MM')"), "2024-05-01");
  EXPECT_EQ(Scalar("SELECT typeof(spark_date_trunc('DAY', TIMESTAMP '2024-01-15 10:30:45'))"),
            "TIMESTAMP WITH TIME ZONE");
  EXPECT_EQ(Scalar("SELECT spark_dayofweek(DATE '2024-07-04')"), "5");  // Thursday
  EXPECT_EQ(Scalar("SELECT spark_weekday(DATE '2024-07-04')"), "3");
}

TEST_F(SparkFunctionsEngineTest, StringsAndNulls) {
  EXPECT_EQ(Scalar("SELECT initcap('hello wORLD foo')"), "Hello World Foo");
  EXPECT_EQ(Scalar("SELECT locate('l', 'hello', 4)"), "4");
  EXPECT_EQ(Scalar("SELECT locate('z', 'hello')"), "0");
  EXPECT_EQ(Scalar("SELECT substring_index('www.apache.org', '.', 2)"), "www.apache");
  EXPECT_EQ(Scalar("SELECT substring_index('www.apache.org', '.', -2)"), "apache.org");
  EXPECT_EQ(Scalar("SELECT find_in_set('b', 'a,b,c')"), "2");
  EXPECT_EQ(Scalar("SELECT elt(2, 'a', 'b', 'c')"), "b");
  EXPECT_EQ(Scalar("SELECT nvl2(NULL, 'a', 'b')"), "b");
  EXPECT_EQ(Scalar("SELECT pmod(-7, 3)"), "2");
  EXPECT_EQ(Scalar("SELECT try_add(2147483647, 1)"), "NULL");
  EXPECT_EQ(Scalar("SELECT spark_length(unhex('0102'))"), "2");
  EXPECT_EQ(Scalar("SELECT spark_length('h\u00e9llo')"), "5");
  EXPECT_EQ(Scalar("SELECT format_number(1234567.891, 2)"), "1,234,567.89");
  // Spark's concat_ws joins the elements of array arguments too, skipping NULLs.
  EXPECT_EQ(Scalar("SELECT spark_concat_ws('|', 'a', NULL, ['b', NULL, 'c'], 'd')"), "a|b|c|d");
  EXPECT_EQ(Scalar("SELECT spark_concat_ws(NULL, 'a')"), "NULL");
  EXPECT_EQ(Scalar("SELECT spark_concat_ws('-', s, [s]) FROM (VALUES ('x'), (NULL)) t(s) "
                   "ORDER BY s NULLS LAST LIMIT 1"),
            "x-x");
  EXPECT_EQ(Scalar("SELECT sort_array([3, NULL, 1], false)"), "[3, 1, NULL]");
  EXPECT_EQ(Scalar("SELECT spark_array_sort([3, NULL, 1])"), "[1, 3, NULL]");
}

TEST_F(SparkFunctionsEngineTest, JavaRegexAndReplacement) {
  EXPECT_EQ(Scalar("SELECT spark_regexp_replace('aaa', 'a', 'b')"), "bbb");
  EXPECT_EQ(Scalar("SELECT spark_regexp_replace('2024-01-15', '(\\d+)-(\\d+)-(\\d+)', "
                   "'$3/$2/$1')"),
            "15/01/2024");
  EXPECT_EQ(Scalar("SELECT spark_regexp_replace('cost', 'cost', '\\$5')"), "$5");
  EXPECT_EQ(Scalar("SELECT spark_regexp_replace('abcabc', 'a', 'X', 2)"), "abcXbc");
  EXPECT_EQ(Scalar("SELECT regexp_extract('k=v', spark_java_regex('(?<key>\\w+)=(?<val>\\w+)'), "
                   "2)"),
            "v");
  EXPECT_EQ(Scalar("SELECT regexp_count('a1b22c333', '\\d')"), "6");
  EXPECT_NE(Error("SELECT spark_regexp_replace('a', 'a', '$x')").find("must name a group"),
            std::string::npos);
  // A group the regex does not have is Spark's error (DuckDB gives ''); named groups count,
  // (?:...), escaped and bracketed parentheses do not.
  EXPECT_EQ(Scalar("SELECT spark_regexp_extract('abc', '(a)(?:b)[(]?\\(?(c)', 2)"), "c");
  EXPECT_EQ(Scalar("SELECT spark_regexp_extract('k=v', '(?<key>\\w+)=(\\w+)', 2)"), "v");
  EXPECT_EQ(Scalar("SELECT spark_regexp_extract(s, '(a)', 1) FROM (VALUES ('xa')) t(s)"), "a");
  for (const char* q :
       {"SELECT spark_regexp_extract('abc', '(a)', 3)",
        "SELECT spark_regexp_extract('abc', 'a', 1)", "SELECT spark_regexp_extract('abc', 'a')",
        "SELECT spark_regexp_extract_all('abc', '(a)', -1)"}) {
    EXPECT_NE(Error(q).find("REGEX_GROUP_INDEX"), std::string::npos) << q;
  }
}

TEST_F(SparkFunctionsEngineTest, BatchWindows) {
  EXPECT_EQ(Scalar("SELECT spark_window(TIMESTAMP '2024-01-01 10:12:00', '10 minutes')"),
            "{'start': '2024-01-01 10:10:00', 'end': '2024-01-01 10:20:00'}");
  EXPECT_EQ(Scalar("SELECT spark_window(TIMESTAMP '2024-01-01 10:12:00', '1 hour', '1 hour', "
                   "'15 minutes').start"),
            "2024-01-01 09:15:00");
  EXPECT_EQ(Scalar("SELECT spark_window(TIMESTAMP '1969-12-31 23:59:30', '1 minute').start"),
            "1969-12-31 23:59:00");
  EXPECT_EQ(Scalar("SELECT spark_window(NULL::TIMESTAMP, '1 day')"), "NULL");
  EXPECT_NE(Error("SELECT spark_window(TIMESTAMP '2024-01-01', '1 month')")
                .find("Intervals greater than a month"),
            std::string::npos);
  EXPECT_NE(Error("SELECT spark_window(TIMESTAMP '2024-01-01', '10 minutes', '5 minutes')")
                .find("sliding window"),
            std::string::npos);
}

TEST_F(SparkFunctionsEngineTest, ArraysMapsAndAggregates) {
  EXPECT_EQ(Scalar("SELECT size([1, 2, 3])"), "3");
  EXPECT_EQ(Scalar("SELECT size(MAP {'a': 1})"), "1");
  EXPECT_EQ(Scalar("SELECT size(NULL::INT[])"), "NULL");
  EXPECT_NE(Error("SELECT size(1)").find("ARRAY or a MAP"), std::string::npos);
  EXPECT_EQ(Scalar("SELECT sequence(10, 1, -3)"), "[10, 7, 4, 1]");
  EXPECT_EQ(Scalar("SELECT sequence(3, 1)"), "[3, 2, 1]");
  EXPECT_EQ(Scalar("SELECT array_repeat('x', 3)"), "[x, x, x]");
  EXPECT_EQ(Scalar("SELECT str_to_map('a=1;b=2', ';', '=')['b']"), "2");
  EXPECT_EQ(Scalar("SELECT collect_list(v) FROM (VALUES (1), (NULL), (3)) t(v)"), "[1, 3]");
  EXPECT_EQ(Scalar("SELECT collect_set(v) FROM (VALUES (1), (1), (NULL)) t(v)"), "[1]");
  EXPECT_EQ(Scalar("SELECT collect_list(v) FROM (VALUES (1)) t(v) WHERE false"), "[]");
  EXPECT_EQ(Scalar("SELECT spark_first(v, true) FROM (VALUES (NULL), (2)) t(v)"), "2");
  EXPECT_EQ(Scalar("SELECT count(*) FROM (SELECT explode_outer(a) FROM (VALUES ([]::INT[]), "
                   "([1, 2])) t(a))"),
            "3");
}

TEST_F(SparkFunctionsEngineTest, Json) {
  EXPECT_EQ(Scalar("SELECT get_json_object('{\"a\":{\"b\":1}}', '$.a')"), "{\"b\":1}");
  EXPECT_EQ(Scalar("SELECT get_json_object('{\"a\":\"x\"}', '$.a')"), "x");
  EXPECT_EQ(Scalar("SELECT get_json_object('not json', '$.a')"), "NULL");
  // A wildcard with no match is NULL (spark_collections_test.cc has the other wildcards).
  EXPECT_EQ(Scalar("SELECT get_json_object('{\"c\":[]}', '$.c[*].x')"), "NULL");
  EXPECT_EQ(Scalar("SELECT json_object_keys('{\"a\":1,\"b\":2}')"), "[a, b]");
  EXPECT_EQ(Scalar("SELECT spark_json_array_length('not json')"), "NULL");
}

TEST_F(SparkFunctionsEngineTest, JsonNumbersAsSparkReadsThem) {
  // The fields read as JSON text (as from_json's rewrite reads them), then typed as Spark.
  const std::string t = "'STRUCT(a INTEGER, b DOUBLE, c BOOLEAN, d DECIMAL(5,2), s VARCHAR)'";
  auto row = [&](const std::string& json) {
    return Scalar("SELECT CAST(spark_json_numbers(json_transform('" + json +
                  "', '{\"a\":\"JSON\",\"b\":\"JSON\",\"c\":\"JSON\",\"d\":\"JSON\","
                  "\"s\":\"VARCHAR\"}'), " +
                  t + ") AS VARCHAR)");
  };
  EXPECT_EQ(row("{\"a\":12,\"b\":1.5,\"c\":true,\"d\":1.005,\"s\":\"x\"}"),
            "{'a': 12, 'b': 1.5, 'c': true, 'd': 1.01, 's': x}");
  EXPECT_EQ(row("{\"a\":\"12\",\"b\":\"1.5\",\"c\":\"true\",\"d\":\"1\",\"s\":12}"),
            "{'a': NULL, 'b': NULL, 'c': NULL, 'd': NULL, 's': 12}");
  EXPECT_EQ(row("{\"a\":1.0,\"b\":\"NaN\",\"c\":1,\"d\":1234.5,\"s\":null}"),
            "{'a': NULL, 'b': nan, 'c': NULL, 'd': NULL, 's': NULL}");
  EXPECT_EQ(row("{\"a\":3000000000,\"b\":-2e3}"),
            "{'a': NULL, 'b': -2000.0, 'c': NULL, 'd': NULL, 's': NULL}");
  // Inside arrays and nested structs; a NULL struct stays NULL.
  EXPECT_EQ(Scalar("SELECT CAST(spark_json_numbers(json_transform('{\"xs\":[1,\"2\",3],\"n\":"
                   "{\"k\":\"4\"}}', '{\"xs\":[\"JSON\"],\"n\":{\"k\":\"JSON\"}}'), "
                   "'STRUCT(xs BIGINT[], n STRUCT(k INTEGER))') AS VARCHAR)"),
            "{'xs': NULL, 'n': {'k': NULL}}");
  EXPECT_EQ(Scalar("SELECT CAST(spark_json_numbers(json_transform('[{\"k\":\"1\"},{\"k\":2}]', "
                   "'[{\"k\":\"JSON\"}]'), 'STRUCT(k INTEGER)[]') AS VARCHAR)"),
            "[{'k': NULL}, {'k': 2}]");
  EXPECT_EQ(Scalar("SELECT CAST(spark_json_numbers(json_transform('{\"m\":{\"a\":1},\"x\":\"2\"}', "
                   "'{\"m\":\"MAP(VARCHAR, INTEGER)\",\"x\":\"JSON\"}'), 'STRUCT(m MAP(VARCHAR, "
                   "INTEGER), x INTEGER)') AS VARCHAR)"),
            "{'m': {a=1}, 'x': NULL}");
  EXPECT_EQ(Scalar("SELECT spark_json_numbers(NULL::STRUCT(a JSON), 'STRUCT(a INTEGER)')"), "NULL");
}

}  // namespace
}  // namespace sluice::engine
