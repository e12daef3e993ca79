#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/test_util.h"

namespace sluice::engine {
namespace {

using BatchTest = testing::EngineTest;

TEST(BatchDefaultTest, EmptyBatchHasNoColumnsAndNoRows) {
  Batch b;
  EXPECT_EQ(b.num_rows(), 0);
  EXPECT_EQ(b.num_columns(), 0u);
  EXPECT_TRUE(b.schema().empty());
  EXPECT_FALSE(b.ColumnIndex("x").has_value());
  EXPECT_EQ(b.memory_bytes(), 0);
  EXPECT_EQ(b.Slice(0, 10).num_rows(), 0);
  auto c = Batch::Concat({});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->num_columns(), 0u);
}

// GetString renders exactly what DuckDB's CAST(v AS VARCHAR) renders, for every type.
TEST_F(BatchTest, GetStringMatchesCastToVarchar) {
  const std::vector<std::string> exprs = {
      "0.1::DOUBLE",
      "1e20::DOUBLE",
      "1.5e-7::DOUBLE",
      "(-0.0)::DOUBLE",
      "'nan'::DOUBLE",
      "'-inf'::DOUBLE",
      "123456789.125::DOUBLE",
      "0.1::FLOAT",
      "3.4e38::FLOAT",
      "1e-3::FLOAT",
      "123.45::DECIMAL(10,2)",
      "(-0.5)::DECIMAL(4,3)",
      "12345678901234567890.1234567890::DECIMAL(38,10)",
      "(-128)::TINYINT",
      "32767::SMALLINT",
      "(-2147483648)::INTEGER",
      "9223372036854775807::BIGINT",
      "(-170141183460469231731687303715884105727)::HUGEINT",
      "TRUE",
      "FALSE",
      "DATE '2024-02-29'",
      "DATE '0044-03-15 (BC)'",
      "'infinity'::DATE",
      "TIME '12:34:56.789'",
      "TIMESTAMP '2024-01-02 03:04:05.123456'",
      "TIMESTAMP '2024-01-02 03:04:05'",
      "'-infinity'::TIMESTAMP",
      "TIMESTAMPTZ '2024-01-02 03:04:05.5+02'",
      "TIMESTAMP_NS '2024-01-02 03:04:05.123456789'",
      "INTERVAL '1 year 2 months 3 days 04:05:06.7'",
      "INTERVAL '-90 minutes'",
      "'6ba7b810-9dad-11d1-80b4-00c04fd430c8'::UUID",
      "'\\xAA\\x00abc'::BLOB",
      "''::BLOB",
      "'it''s ü'",
      "''",
      "[1, 2, NULL]",
      "['a', NULL, 'b c', '']",
      "[]::INTEGER[]",
      "[[1], [2, 3]]",
      "{'a': 1, 'b': 'x'}",
      "{'s': {'t': [1.5]}}",
      "MAP {'k': 1, 'j': NULL}",
      "MAP {1: [2]}",
      "'{\"a\": [1, 2]}'::JSON",
      "18446744073709551615::UBIGINT",
      "[{'x': DATE '2020-01-01'}]",
      "['hello', 'wo''rld']::VARCHAR[]",
      "ARRAY_VALUE(1.5, 2)",
  };
  for (const std::string& e : exprs) {
    Batch b = Q("SELECT " + e + " AS v, CAST(" + e + " AS VARCHAR) AS s");
    ASSERT_EQ(b.num_rows(), 1) << e;
    auto got = b.GetString(0, 0);
    auto want = b.GetString(0, 1);
    ASSERT_TRUE(want.has_value()) << e;
    ASSERT_TRUE(got.has_value()) << e;
    EXPECT_EQ(*got, *want) << e;
    EXPECT_FALSE(b.IsNull(0, 0)) << e;
  }
}

// A few renderings pinned down, so that the comparison above cannot pass by accident.
TEST_F(BatchTest, GetStringKnownRenderings) {
  auto one = [&](const std::string& e) {
    return Q("SELECT " + e).GetString(0, 0).value_or("NULL");
  };
  EXPECT_EQ(one("0.1::DOUBLE"), "0.1");
  EXPECT_EQ(one("1e20::DOUBLE"), "1e+20");
  EXPECT_EQ(one("0.1::FLOAT"), "0.1");
  EXPECT_EQ(one("123.45::DECIMAL(10,2)"), "123.45");
  EXPECT_EQ(one("TIMESTAMP '2024-01-02 03:04:05.123456'"), "2024-01-02 03:04:05.123456");
  EXPECT_EQ(one("TIMESTAMPTZ '2024-01-02 03:04:05+02'"), "2024-01-02 01:04:05+00");
  EXPECT_EQ(one("DATE '2024-02-29'"), "2024-02-29");
  EXPECT_EQ(one("'\\xAA\\x00abc'::BLOB"), "\\xAA\\x00abc");
  EXPECT_EQ(one("[1, 2, NULL]"), "[1, 2, NULL]");
  EXPECT_EQ(one("{'a': 1, 'b': 'x'}"), "{'a': 1, 'b': x}");
  EXPECT_EQ(one("MAP {'k': 1}"), "{k=1}");
  EXPECT_EQ(one("TRUE"), "true");
}

TEST_F(BatchTest, NullCells) {
  for (const char* e : {"NULL", "NULL::INTEGER", "NULL::VARCHAR", "NULL::INTEGER[]",
                        "NULL::STRUCT(a INT)", "NULL::TIMESTAMPTZ"}) {
    Batch b = Q(std::string("SELECT ") + e + " AS v, CAST(" + e + " AS VARCHAR) AS s");
    ASSERT_EQ(b.num_rows(), 1);
    EXPECT_TRUE(b.IsNull(0, 0)) << e;
    EXPECT_FALSE(b.GetString(0, 0).has_value()) << e;
    EXPECT_FALSE(b.GetString(0, 1).has_value()) << e;
    auto i = b.GetInt64(0, 0);
    ASSERT_TRUE(i.ok()) << e;
    EXPECT_FALSE(i->has_value());
  }
  // A NULL inside a nested value is not a NULL cell.
  Batch b = Q("SELECT [NULL]::INTEGER[] AS v");
  EXPECT_FALSE(b.IsNull(0, 0));
  EXPECT_EQ(*b.GetString(0, 0), "[NULL]");
}

TEST_F(BatchTest, TypedGetters) {
  Batch b =
      Q("SELECT 42 AS i, '17' AS s, 2.5 AS d, 'abc' AS bad, true AS t, 'false' AS f, "
        "1e300 AS huge");
  EXPECT_EQ(**b.GetInt64(0, 0), 42);
  EXPECT_EQ(**b.GetInt64(0, 1), 17);
  EXPECT_DOUBLE_EQ(**b.GetDouble(0, 2), 2.5);
  EXPECT_DOUBLE_EQ(**b.GetDouble(0, 0), 42.0);
  EXPECT_EQ(**b.GetBool(0, 4), true);
  EXPECT_EQ(**b.GetBool(0, 5), false);
  auto bad = b.GetInt64(0, 3);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsInvalidArgument()) << bad.status().ToString();
  EXPECT_FALSE(b.GetBool(0, 3).ok());
  EXPECT_FALSE(b.GetDouble(0, 3).ok());
  auto overflow = b.GetInt64(0, 6);
  EXPECT_FALSE(overflow.ok());
}

TEST_F(BatchTest, SchemaAndColumnIndex) {
  Batch b = Q("SELECT 1::BIGINT AS a, 'x' AS \"B c\", [1.5] AS l");
  ASSERT_EQ(b.num_columns(), 3u);
  EXPECT_EQ(b.schema()[0].name, "a");
  EXPECT_EQ(b.schema()[0].type.id, TypeId::kBigInt);
  EXPECT_EQ(b.schema()[1].name, "B c");
  EXPECT_EQ(b.schema()[2].type.id, TypeId::kList);
  EXPECT_EQ(b.ColumnIndex("B c"), 1u);
  EXPECT_FALSE(b.ColumnIndex("b c").has_value());  // exact match only
  EXPECT_GT(b.memory_bytes(), 0);
}

TEST_F(BatchTest, CellAccessAcrossChunks) {
  Batch b = Q("SELECT i, i::VARCHAR AS s FROM range(5000) t(i)");
  ASSERT_EQ(b.num_rows(), 5000);
  for (int64_t row : {0, 1, 2047, 2048, 2049, 4095, 4096, 4999}) {
    EXPECT_EQ(**b.GetInt64(row, 0), row);
    EXPECT_EQ(*b.GetString(row, 1), std::to_string(row));
  }
}

TEST_F(BatchTest, Slice) {
  Batch b = Q("SELECT i, 'v' || i AS s FROM range(5000) t(i)");
  Batch s = b.Slice(2000, 1000);  // crosses the 2048-row chunk boundary
  ASSERT_EQ(s.num_rows(), 1000);
  EXPECT_EQ(s.schema(), b.schema());
  EXPECT_EQ(**s.GetInt64(0, 0), 2000);
  EXPECT_EQ(**s.GetInt64(999, 0), 2999);
  EXPECT_EQ(*s.GetString(48, 1), "v2048");
  ASSERT_TRUE(conn_->RegisterBatch("s", s).ok());
  EXPECT_EQ(Scalar("SELECT sum(i) FROM s"), std::to_string((2000 + 2999) * 1000 / 2));

  EXPECT_EQ(b.Slice(4990, 100).num_rows(), 10);  // clamped
  EXPECT_EQ(**b.Slice(4990, 100).GetInt64(9, 0), 4999);
  Batch none = b.Slice(6000, 5);
  EXPECT_EQ(none.num_rows(), 0);
  EXPECT_EQ(none.num_columns(), 2u);
  EXPECT_EQ(b.Slice(-5, 3).num_rows(), 3);
  EXPECT_EQ(**b.Slice(-5, 3).GetInt64(0, 0), 0);
  EXPECT_EQ(b.Slice(0, 5000).data(), b.data());  // whole batch: shared, not copied
  EXPECT_EQ(b.Slice(10, 0).num_rows(), 0);
}

TEST_F(BatchTest, Concat) {
  Batch a = Q("SELECT i, i::VARCHAR AS s FROM range(3000) t(i)");
  Batch b = Q("SELECT i, i::VARCHAR AS s FROM range(3000, 5000) t(i)");
  Batch empty = a.Slice(0, 0);
  auto c = Batch::Concat({a, empty, b});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->num_rows(), 5000);
  EXPECT_EQ(c->schema(), a.schema());
  EXPECT_EQ(**c->GetInt64(2999, 0), 2999);
  EXPECT_EQ(**c->GetInt64(3000, 0), 3000);
  EXPECT_EQ(*c->GetString(4999, 1), "4999");
  ASSERT_TRUE(conn_->RegisterBatch("c", *c).ok());
  EXPECT_EQ(Scalar("SELECT sum(i) FROM c"), std::to_string(4999LL * 5000 / 2));

  auto single = Batch::Concat({a});
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->num_rows(), 3000);

  Batch other = Q("SELECT 'x' AS i, 1 AS s");
  auto mismatch = Batch::Concat({a, other});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_TRUE(mismatch.status().IsInvalidArgument());
  auto fewer = Batch::Concat({a, Q("SELECT 1::BIGINT AS i")});
  EXPECT_FALSE(fewer.ok());
}

// Batches share the database's memory; they stay valid after the engine is gone.
TEST(BatchLifetimeTest, BatchOutlivesEngine) {
  Batch b;
  {
    auto engine = Engine::Open();
    ASSERT_TRUE(engine.ok());
    auto conn = (*engine)->Connect();
    ASSERT_TRUE(conn.ok());
    auto r = (*conn)->Query("SELECT i, repeat('x', 100) || i AS s FROM range(10000) t(i)");
    ASSERT_TRUE(r.ok());
    b = *r;
  }
  ASSERT_EQ(b.num_rows(), 10000);
  EXPECT_EQ(*b.GetString(9999, 1), std::string(100, 'x') + "9999");
  Batch s = b.Slice(5000, 10);
  EXPECT_EQ(**s.GetInt64(0, 0), 5000);
}

}  // namespace
}  // namespace sluice::engine
