#include "engine/types.h"

#include <gtest/gtest.h>

#include "engine/test_util.h"

namespace sluice::engine {
namespace {

DataType T(TypeId id) { return DataType{id}; }
DataType Dec(uint8_t p, uint8_t s) {
  DataType t{TypeId::kDecimal};
  t.precision = p;
  t.scale = s;
  return t;
}
DataType ListOf(DataType e) {
  DataType t{TypeId::kList};
  t.children.push_back(Field{"element", std::move(e), true});
  return t;
}
DataType MapOf(DataType k, DataType v) {
  DataType t{TypeId::kMap};
  t.children.push_back(Field{"key", std::move(k), true});
  t.children.push_back(Field{"value", std::move(v), true});
  return t;
}
DataType StructOf(std::vector<Field> fields) {
  DataType t{TypeId::kStruct};
  t.children = std::move(fields);
  return t;
}

TEST(DataTypeTest, ToSqlScalars) {
  EXPECT_EQ(T(TypeId::kBigInt).ToSql(), "BIGINT");
  EXPECT_EQ(T(TypeId::kInteger).ToSql(), "INTEGER");
  EXPECT_EQ(T(TypeId::kVarchar).ToSql(), "VARCHAR");
  EXPECT_EQ(T(TypeId::kTimestampTz).ToSql(), "TIMESTAMP WITH TIME ZONE");
  EXPECT_EQ(Dec(10, 2).ToSql(), "DECIMAL(10,2)");
  EXPECT_EQ(ListOf(T(TypeId::kInteger)).ToSql(), "INTEGER[]");
  EXPECT_EQ(MapOf(T(TypeId::kVarchar), T(TypeId::kInteger)).ToSql(), "MAP(VARCHAR, INTEGER)");
  EXPECT_EQ(StructOf({{"a", T(TypeId::kInteger)}, {"b", ListOf(T(TypeId::kVarchar))}}).ToSql(),
            "STRUCT(\"a\" INTEGER, \"b\" VARCHAR[])");
}

TEST(DataTypeTest, FromSqlParsesDuckDbTypeText) {
  struct Case {
    const char* sql;
    DataType want;
  };
  std::vector<Case> cases = {
      {"BIGINT", T(TypeId::kBigInt)},
      {"int", T(TypeId::kInteger)},
      {"INT8", T(TypeId::kBigInt)},
      {"boolean", T(TypeId::kBoolean)},
      {"TINYINT", T(TypeId::kTinyInt)},
      {"SMALLINT", T(TypeId::kSmallInt)},
      {"HUGEINT", T(TypeId::kHugeInt)},
      {"REAL", T(TypeId::kFloat)},
      {"DOUBLE", T(TypeId::kDouble)},
      {"DECIMAL(10,2)", Dec(10, 2)},
      {"NUMERIC(38, 18)", Dec(38, 18)},
      {"TEXT", T(TypeId::kVarchar)},
      {"BLOB", T(TypeId::kBlob)},
      {"DATE", T(TypeId::kDate)},
      {"TIME", T(TypeId::kTime)},
      {"TIMESTAMP", T(TypeId::kTimestamp)},
      {"TIMESTAMPTZ", T(TypeId::kTimestampTz)},
      {"TIMESTAMP WITH TIME ZONE", T(TypeId::kTimestampTz)},
      {"INTERVAL", T(TypeId::kInterval)},
      {"UUID", T(TypeId::kUuid)},
      {"NULL", T(TypeId::kNull)},
      {"INTEGER[]", ListOf(T(TypeId::kInteger))},
      {"VARCHAR[][]", ListOf(ListOf(T(TypeId::kVarchar)))},
      {"MAP(VARCHAR, INTEGER)", MapOf(T(TypeId::kVarchar), T(TypeId::kInteger))},
      {"STRUCT(a INTEGER, b VARCHAR[])",
       StructOf({{"a", T(TypeId::kInteger)}, {"b", ListOf(T(TypeId::kVarchar))}})},
      {"STRUCT(\"x y\" STRUCT(\"q\"\"\" BIGINT))",
       StructOf({{"x y", StructOf({{"q\"", T(TypeId::kBigInt)}})}})},
  };
  for (const Case& c : cases) {
    auto got = DataType::FromSql(c.sql);
    ASSERT_TRUE(got.ok()) << c.sql << ": " << got.status().ToString();
    EXPECT_EQ(*got, c.want) << c.sql << " parsed as " << got->ToSql();
    // And back: ToSql is parseable and gives the same type.
    auto again = DataType::FromSql(got->ToSql());
    ASSERT_TRUE(again.ok()) << got->ToSql() << ": " << again.status().ToString();
    EXPECT_EQ(*again, c.want) << got->ToSql();
  }
}

TEST(DataTypeTest, OtherTypesKeepTheirText) {
  auto t = DataType::FromSql("UBIGINT");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->id, TypeId::kOther);
  EXPECT_EQ(t->ToSql(), "UBIGINT");
  auto ns = DataType::FromSql("TIMESTAMP_NS");
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(ns->id, TypeId::kOther);
  auto back = DataType::FromSql(ns->ToSql());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, *ns);
}

TEST(DataTypeTest, FromSqlRejectsUnknownOrBrokenText) {
  for (const char* bad :
       {"FOOBAR", "", "DECIMAL(", "STRUCT(a)", "MAP(INTEGER)", "INTEGER[", "NOTATYPE[]"}) {
    auto r = DataType::FromSql(bad);
    EXPECT_FALSE(r.ok()) << "'" << bad << "' parsed as " << (r.ok() ? r->ToSql() : "");
    if (!r.ok()) {
      EXPECT_TRUE(r.status().IsInvalidArgument()) << bad << ": " << r.status().ToString();
    }
  }
}

TEST(DataTypeTest, Equality) {
  EXPECT_EQ(Dec(10, 2), Dec(10, 2));
  EXPECT_NE(Dec(10, 2), Dec(10, 3));
  EXPECT_NE(Dec(10, 2), Dec(11, 2));
  EXPECT_NE(T(TypeId::kInteger), T(TypeId::kBigInt));
  // precision/scale only matter for decimals
  DataType a = T(TypeId::kInteger);
  a.precision = 5;
  EXPECT_EQ(a, T(TypeId::kInteger));
  EXPECT_NE(StructOf({{"a", T(TypeId::kInteger)}}), StructOf({{"b", T(TypeId::kInteger)}}));
  EXPECT_NE(StructOf({{"a", T(TypeId::kInteger)}}), StructOf({{"a", T(TypeId::kBigInt)}}));
  EXPECT_NE(ListOf(T(TypeId::kInteger)), ListOf(T(TypeId::kVarchar)));
  DataType o1{TypeId::kOther}, o2{TypeId::kOther};
  o1.other_sql = "UBIGINT";
  o2.other_sql = "UINTEGER";
  EXPECT_NE(o1, o2);
}

using SchemaFromQueryTest = testing::EngineTest;

// The schema of a query result matches DuckDB's typeof() of each value, through FromSql.
TEST_F(SchemaFromQueryTest, ResultTypesMatchTypeof) {
  const char* exprs[] = {"42",
                         "42::BIGINT",
                         "1.5::DOUBLE",
                         "1.5::FLOAT",
                         "123.45::DECIMAL(10,2)",
                         "'x'",
                         "'\\x01'::BLOB",
                         "DATE '2024-01-01'",
                         "TIME '01:02:03'",
                         "TIMESTAMP '2024-01-01'",
                         "TIMESTAMPTZ '2024-01-01 00:00:00+00'",
                         "INTERVAL 1 DAY",
                         "uuid()",
                         "[1, 2]",
                         "{'a': 1, 'b': [1.5]}",
                         "MAP {'k': 1}",
                         "170141183460469231731687303715884105727::HUGEINT",
                         "TRUE",
                         "1::UTINYINT"};
  for (const char* e : exprs) {
    Batch b = Q(std::string("SELECT ") + e + " AS v, typeof(" + e + ") AS t");
    ASSERT_EQ(b.num_rows(), 1) << e;
    auto want = DataType::FromSql(*b.GetString(0, 1));
    ASSERT_TRUE(want.ok()) << e << ": " << want.status().ToString();
    EXPECT_EQ(b.schema()[0].type, *want)
        << e << ": got " << b.schema()[0].type.ToSql() << " want " << *b.GetString(0, 1);
    EXPECT_EQ(b.schema()[0].name, "v");
  }
}

}  // namespace
}  // namespace sluice::engine
