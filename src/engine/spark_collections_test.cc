// Spark's array, map, JSON and string functions of the engine (spark_collections.h,
// spark_json.h, spark_string_functions.h), called by their engine names as the dialect writes
// them. The expected answers are Spark 4's (the SQL differential, test/differential/sql, checks
// the same functions against Spark itself).
#include <gtest/gtest.h>

#include "engine/test_util.h"

namespace sluice::engine {
namespace {

class SparkCollectionsTest : public testing::EngineTest {
 protected:
  std::string Error(const std::string& sql) {
    auto r = conn_->Query(sql);
    EXPECT_FALSE(r.ok()) << sql;
    return r.ok() ? std::string() : r.status().message();
  }
};

TEST_F(SparkCollectionsTest, SubscriptsCountFromZeroAndRefuseOutOfBounds) {
  EXPECT_EQ(Scalar("SELECT spark_element([10, 20, 30], 0)"), "10");
  EXPECT_EQ(Scalar("SELECT spark_element([[1, 2], [3]], 1)"), "[3]");
  EXPECT_EQ(Scalar("SELECT spark_element(NULL::INT[], 0)"), "NULL");
  EXPECT_EQ(Scalar("SELECT spark_element(MAP {1: 'a', 2: 'b'}, 2)"), "b");
  EXPECT_EQ(Scalar("SELECT spark_element(MAP {'a': 1}, 'z')"), "NULL");
  EXPECT_NE(Error("SELECT spark_element([10, 20, 30], 3)").find("INVALID_ARRAY_INDEX"),
            std::string::npos);
  EXPECT_NE(Error("SELECT spark_element([10, 20, 30], -1)").find("INVALID_ARRAY_INDEX"),
            std::string::npos);
  // Rows of a column: NULL lists and NULL elements.
  EXPECT_EQ(Scalar("SELECT string_agg(coalesce(spark_element(l, 1)::VARCHAR, 'null'), ',' ORDER "
                   "BY k) FROM (VALUES (1, [1, NULL]), (2, NULL), (3, [5, 6])) t(k, l)"),
            "null,null,6");
}

TEST_F(SparkCollectionsTest, ElementAtIsOneBasedAndNegativeFromTheEnd) {
  EXPECT_EQ(Scalar("SELECT spark_element_at([10, 20, 30], 1)"), "10");
  EXPECT_EQ(Scalar("SELECT spark_element_at([10, 20, 30], -1)"), "30");
  EXPECT_EQ(Scalar("SELECT spark_try_element_at([10, 20, 30], 5)"), "NULL");
  EXPECT_EQ(Scalar("SELECT spark_element_at(MAP {'a': 1}, 'z')"), "NULL");
  EXPECT_NE(
      Error("SELECT spark_element_at([10, 20, 30], 5)").find("INVALID_ARRAY_INDEX_IN_ELEMENT_AT"),
      std::string::npos);
  EXPECT_NE(Error("SELECT spark_element_at([10], 0)").find("INVALID_INDEX_OF_ZERO"),
            std::string::npos);
  EXPECT_NE(Error("SELECT spark_element_at('abc', 1)").find("does not take"), std::string::npos);
}

TEST_F(SparkCollectionsTest, ReverseOfStringsAndArrays) {
  EXPECT_EQ(Scalar("SELECT spark_reverse('abc')"), "cba");
  EXPECT_EQ(Scalar("SELECT spark_reverse([[1], NULL, [2, 3]])"), "[[2, 3], NULL, [1]]");
  EXPECT_EQ(Scalar("SELECT spark_reverse(NULL::INT[])"), "NULL");
}

TEST_F(SparkCollectionsTest, ArrayFunctionsKeepSparkOrderAndNulls) {
  EXPECT_EQ(Scalar("SELECT spark_array_distinct([NULL, 2, NULL, 1, 2])"), "[NULL, 2, 1]");
  EXPECT_EQ(Scalar("SELECT spark_array_intersect([1, 2, 3], [3, 2, 4])"), "[2, 3]");
  EXPECT_EQ(Scalar("SELECT array_except([3, 1, 2, 3], [2])"), "[3, 1]");
  EXPECT_EQ(Scalar("SELECT array_union([1, NULL], [NULL, 2])"), "[1, NULL, 2]");
  EXPECT_EQ(Scalar("SELECT spark_array_contains([1, NULL], 3)"), "NULL");
  EXPECT_EQ(Scalar("SELECT spark_array_contains([1, NULL], 1)"), "true");
  EXPECT_EQ(Scalar("SELECT arrays_overlap([1, NULL], [3])"), "NULL");
  EXPECT_EQ(Scalar("SELECT array_remove([1, NULL, 2, 1], 1)"), "[NULL, 2]");
  EXPECT_EQ(Scalar("SELECT array_join(['a', NULL, 'b'], ',')"), "a,b");
  EXPECT_EQ(Scalar("SELECT array_join(['a', NULL], ',', '?')"), "a,?");
  EXPECT_EQ(Scalar("SELECT array_insert([5, 3, 2, 1], -4, 4)"), "[5, 4, 3, 2, 1]");
  EXPECT_EQ(Scalar("SELECT array_insert([1, 2], 5, 9)"), "[1, 2, NULL, NULL, 9]");
  EXPECT_EQ(Scalar("SELECT slice([1, 2, 3, 4], -2, 2)"), "[3, 4]");
  EXPECT_NE(Error("SELECT slice([1, 2], 0, 1)").find("must not be 0"), std::string::npos);
}

TEST_F(SparkCollectionsTest, LambdaHelpers) {
  EXPECT_EQ(Scalar("SELECT spark_exists([false, NULL])"), "NULL");
  EXPECT_EQ(Scalar("SELECT spark_exists([false, true, NULL])"), "true");
  EXPECT_EQ(Scalar("SELECT spark_forall([true, NULL])"), "NULL");
  EXPECT_EQ(Scalar("SELECT spark_forall([true, false, NULL])"), "false");
  // A descending comparator, stable for ties.
  EXPECT_EQ(
      Scalar("SELECT spark_sort_by_comparison([1, 3, 2], list_transform(spark_array_pairs("
             "[1, 3, 2]), p -> CASE WHEN p.l > p.r THEN -1 WHEN p.l < p.r THEN 1 ELSE 0 END))"),
      "[3, 2, 1]");
  EXPECT_EQ(Scalar("SELECT spark_map_zip(MAP {'a': 1}, MAP {'b': 2})"),
            "[{'key': a, 'v1': 1, 'v2': NULL}, {'key': b, 'v1': NULL, 'v2': 2}]");
}

TEST_F(SparkCollectionsTest, ToJsonAsSparkWritesIt) {
  EXPECT_EQ(Scalar("SELECT spark_to_json({'a': 1, 'b': NULL::INT, 'c': {'d': NULL::INT}})"),
            "{\"a\":1,\"c\":{}}");
  EXPECT_EQ(Scalar("SELECT spark_to_json({'t': TIMESTAMP '2024-01-15 10:30:45.123456', 'd': DATE "
                   "'2024-01-15', 'x': 1.0::DOUBLE, 'y': 1e20::DOUBLE, 'z': 1.50})"),
            "{\"t\":\"2024-01-15T10:30:45.123Z\",\"d\":\"2024-01-15\",\"x\":1.0,\"y\":1.0E20,"
            "\"z\":1.50}");
  EXPECT_EQ(Scalar("SELECT spark_to_json([1, NULL])"), "[1,null]");
  EXPECT_EQ(Scalar("SELECT spark_to_json(MAP {'k': 'a\"b'})"), "{\"k\":\"a\\\"b\"}");
}

TEST_F(SparkCollectionsTest, JsonFunctions) {
  EXPECT_EQ(Scalar("SELECT schema_of_json('{\"b\":1,\"a\":[1, 2.5],\"c\":null}')"),
            "STRUCT<a: ARRAY<DOUBLE>, b: BIGINT, c: STRING>");
  EXPECT_EQ(Scalar("SELECT get_json_object('{\"c\":[{\"x\":1},{\"x\":2}]}', '$.c[*].x')"), "[1,2]");
  EXPECT_EQ(Scalar("SELECT get_json_object('{\"c\":[{\"x\":\"a\"}]}', '$.c[*].x')"), "a");
  EXPECT_EQ(Scalar("SELECT get_json_object('{\"a b\":1}', '$[''a b'']')"), "1");
  EXPECT_NE(Error("SELECT schema_of_json('nope')").find("not JSON"), std::string::npos);
}

TEST_F(SparkCollectionsTest, StringFunctions) {
  EXPECT_EQ(Scalar("SELECT soundex('Robert') || soundex('Tymczak') || soundex('1x')"),
            "R163T5221x");
  EXPECT_EQ(Scalar("SELECT crc32('abc')"), "891568578");  // java.util.zip.CRC32
  EXPECT_EQ(Scalar("SELECT mask('Ab1-c')"), "Xxn-x");
  EXPECT_EQ(Scalar("SELECT overlay('Spark SQL' PLACING 'CORE' FROM 7)"), "Spark CORE");
  EXPECT_EQ(Scalar("SELECT regexp_instr('abc123', '[0-9]')"), "4");
  EXPECT_EQ(Scalar("SELECT spark_split_limit('a,b,c', ',', 2)"), "[a, 'b,c']");
  EXPECT_EQ(Scalar("SELECT spark_decode(encode('é'), 'utf-8')"), "é");
  EXPECT_NE(Error("SELECT spark_decode(encode('a'), 'latin1')").find("not supported"),
            std::string::npos);
  EXPECT_NE(Error("SELECT spark_hash([1])").find("not supported"), std::string::npos);
}

}  // namespace
}  // namespace sluice::engine
