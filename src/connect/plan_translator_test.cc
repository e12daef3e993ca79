#include "connect/plan_translator.h"

#include "connect/pyspark_names.h"

#include <gtest/gtest.h>

#include "spark/connect/relations.pb.h"

namespace sluice::connect {
namespace {

namespace sc = spark::connect;

sc::Expression Col(const std::string& name) {
  sc::Expression e;
  e.mutable_unresolved_attribute()->set_unparsed_identifier(name);
  return e;
}

sc::Expression Int(int32_t v) {
  sc::Expression e;
  e.mutable_literal()->set_integer(v);
  return e;
}

sc::Expression Call(const std::string& name, std::vector<sc::Expression> args) {
  sc::Expression e;
  e.mutable_unresolved_function()->set_function_name(name);
  for (auto& a : args) *e.mutable_unresolved_function()->add_arguments() = a;
  return e;
}

sc::Relation Range(int64_t start, int64_t end, int64_t step) {
  sc::Relation r;
  r.mutable_range()->set_start(start);
  r.mutable_range()->set_end(end);
  r.mutable_range()->set_step(step);
  return r;
}

std::string Query(const sc::Relation& r) {
  PlanTranslator t;
  Result<std::string> q = t.Query(r);
  EXPECT_TRUE(q.ok()) << q.status().ToString();
  return q.ok() ? *q : "";
}

TEST(PlanTranslatorTest, RangeHasSparksIdColumn) {
  EXPECT_EQ(Query(Range(0, 5, 1)), "SELECT * FROM range(0, 5, 1) AS _range(id)");
}

TEST(PlanTranslatorTest, SqlRelationIsItsQuery) {
  sc::Relation r;
  r.mutable_sql()->set_query("SELECT 1 AS a;  ");
  EXPECT_EQ(Query(r), "SELECT 1 AS a");
}

TEST(PlanTranslatorTest, ProjectFilterLimitNest) {
  sc::Relation filter;
  *filter.mutable_filter()->mutable_input() = Range(0, 10, 1);
  *filter.mutable_filter()->mutable_condition() = Call(">", {Col("id"), Int(3)});
  sc::Relation project;
  *project.mutable_project()->mutable_input() = filter;
  sc::Expression alias;
  *alias.mutable_alias()->mutable_expr() = Call("+", {Col("id"), Int(1)});
  alias.mutable_alias()->add_name("next id");
  *project.mutable_project()->add_expressions() = alias;
  sc::Relation limit;
  *limit.mutable_limit()->mutable_input() = project;
  limit.mutable_limit()->set_limit(2);
  EXPECT_EQ(Query(limit),
            "SELECT * FROM (SELECT (id + 1) AS `next id` FROM (SELECT * FROM (SELECT * FROM "
            "range(0, 10, 1) AS _range(id)) AS _s0 WHERE (id > 3)) AS _s1) AS _s2 LIMIT 2");
}

TEST(PlanTranslatorTest, LimitRightAboveSortKeepsTheOrder) {
  sc::Relation sort;
  *sort.mutable_sort()->mutable_input() = Range(0, 10, 1);
  auto* order = sort.mutable_sort()->add_order();
  *order->mutable_child() = Col("id");
  order->set_direction(sc::Expression::SortOrder::SORT_DIRECTION_DESCENDING);
  order->set_null_ordering(sc::Expression::SortOrder::SORT_NULLS_LAST);
  sc::Relation limit;
  *limit.mutable_limit()->mutable_input() = sort;
  limit.mutable_limit()->set_limit(3);
  std::string q = Query(limit);
  EXPECT_NE(q.find("ORDER BY id DESC NULLS LAST LIMIT 3"), std::string::npos) << q;
}

TEST(PlanTranslatorTest, SubqueryAliasNamesTheDerivedTable) {
  sc::Relation alias;
  *alias.mutable_subquery_alias()->mutable_input() = Range(0, 3, 1);
  alias.mutable_subquery_alias()->set_alias("t");
  sc::Relation project;
  *project.mutable_project()->mutable_input() = alias;
  *project.mutable_project()->add_expressions() = Col("t.id");
  std::string q = Query(project);
  EXPECT_NE(q.find(") AS t"), std::string::npos) << q;
  EXPECT_EQ(q.rfind("SELECT t.id FROM", 0), 0u) << q;
}

// spark.range(6).alias("t").where(...).selectExpr("t.id"): Spark keeps the qualifier t through
// Filter, Sort and Limit, so the derived table above them is named t again (the CI failure of
// where_string_and_alias: "Referenced table t not found").
TEST(PlanTranslatorTest, AliasSurvivesFilterSortAndLimit) {
  sc::Relation alias;
  *alias.mutable_subquery_alias()->mutable_input() = Range(0, 6, 1);
  alias.mutable_subquery_alias()->set_alias("t");
  sc::Relation filter;
  *filter.mutable_filter()->mutable_input() = alias;
  *filter.mutable_filter()->mutable_condition() = Call(">", {Col("id"), Int(1)});
  sc::Relation sort;
  *sort.mutable_sort()->mutable_input() = filter;
  *sort.mutable_sort()->add_order()->mutable_child() = Col("id");
  sc::Relation limit;
  *limit.mutable_limit()->mutable_input() = sort;
  limit.mutable_limit()->set_limit(2);
  for (const sc::Relation* below : {&filter, &sort, &limit}) {
    sc::Relation project;
    *project.mutable_project()->mutable_input() = *below;
    *project.mutable_project()->add_expressions() = Col("t.id");
    std::string q = Query(project);
    EXPECT_EQ(q.rfind("SELECT t.id FROM (", 0), 0u) << q;
    EXPECT_EQ(q.substr(q.size() - 6), ") AS t") << q;
  }
}

TEST(PlanTranslatorTest, SelectExprTextAndAliasedGroupingKeys) {
  sc::Relation project;
  *project.mutable_project()->mutable_input() = Range(0, 3, 1);
  project.mutable_project()->add_expressions()->mutable_expression_string()->set_expression(
      "id + 1 AS next");
  EXPECT_EQ(Query(project).rfind("SELECT id + 1 AS next FROM", 0), 0u) << Query(project);
  sc::Relation agg;
  agg.mutable_aggregate()->set_group_type(sc::Aggregate::GROUP_TYPE_GROUPBY);
  *agg.mutable_aggregate()->mutable_input() = Range(0, 3, 1);
  sc::Expression key;
  *key.mutable_alias()->mutable_expr() = Call("%", {Col("id"), Int(2)});
  key.mutable_alias()->add_name("k");
  *agg.mutable_aggregate()->add_grouping_expressions() = key;
  *agg.mutable_aggregate()->add_aggregate_expressions() = Call("count", {Col("id")});
  std::string q = Query(agg);
  EXPECT_EQ(q.rfind("SELECT (id % 2) AS k, count(id) FROM", 0), 0u) << q;
  EXPECT_NE(q.find("GROUP BY (id % 2)"), std::string::npos) << q;
}

TEST(PlanTranslatorTest, OperatorsAndWhen) {
  PlanTranslator t;
  EXPECT_EQ(*t.Expr(Call("==", {Col("a"), Int(1)})), "(a = 1)");
  EXPECT_EQ(*t.Expr(Call("and", {Col("a"), Col("b")})), "(a AND b)");
  EXPECT_EQ(*t.Expr(Call("not", {Col("a")})), "(NOT a)");
  EXPECT_EQ(*t.Expr(Call("isNull", {Col("a")})), "(a IS NULL)");
  EXPECT_EQ(*t.Expr(Call("in", {Col("a"), Int(1), Int(2)})), "(a IN (1, 2))");
  EXPECT_EQ(*t.Expr(Call("when", {Col("c"), Int(1), Int(2)})), "CASE WHEN c THEN 1 ELSE 2 END");
  EXPECT_EQ(*t.Expr(Call("upper", {Col("s")})), "upper(s)");
  sc::Expression distinct = Call("count", {Col("a")});
  distinct.mutable_unresolved_function()->set_is_distinct(true);
  EXPECT_EQ(*t.Expr(distinct), "count(DISTINCT a)");
}

TEST(PlanTranslatorTest, IdentifiersAreQuotedWhereNeeded) {
  EXPECT_EQ(QuoteIdentifier("a"), "a");
  EXPECT_EQ(QuoteIdentifier("t.a"), "t.a");
  EXPECT_EQ(QuoteIdentifier("count(1)"), "`count(1)`");
  EXPECT_EQ(QuoteIdentifier("`my col`.x"), "`my col`.x");
  EXPECT_EQ(QuoteName("we`ird"), "`we``ird`");
}

TEST(PlanTranslatorTest, Literals) {
  auto lit = [](auto set) {
    sc::Expression e;
    set(e.mutable_literal());
    return *LiteralToSql(e);
  };
  EXPECT_EQ(lit([](auto* l) { l->set_long_(5); }), "CAST(5 AS BIGINT)");
  EXPECT_EQ(lit([](auto* l) { l->set_string("it's \\"); }), "'it\\'s \\\\'");
  EXPECT_EQ(lit([](auto* l) { l->set_boolean(true); }), "TRUE");
  EXPECT_EQ(lit([](auto* l) { l->set_date(19723); }), "DATE '2024-01-01'");
  EXPECT_EQ(lit([](auto* l) { l->set_timestamp(1500000); }),
            "TIMESTAMP '1970-01-01 00:00:01.500000'");
  EXPECT_EQ(lit([](auto* l) { l->set_timestamp(-1); }), "TIMESTAMP '1969-12-31 23:59:59.999999'");
  EXPECT_EQ(lit([](auto* l) { l->set_binary(std::string("\x01\xAB", 2)); }), "X'01AB'");
  EXPECT_EQ(lit([](auto* l) { l->mutable_null()->mutable_long_(); }), "CAST(NULL AS BIGINT)");
  EXPECT_EQ(lit([](auto* l) {
              l->mutable_decimal()->set_value("1.50");
              l->mutable_decimal()->set_precision(5);
              l->mutable_decimal()->set_scale(2);
            }),
            "CAST('1.50' AS DECIMAL(5,2))");
}

TEST(PlanTranslatorTest, RefusalsNameThePySparkApi) {
  EXPECT_EQ(RelationWithApi("catalog"), "catalog (spark.catalog)");
  EXPECT_EQ(CommandWithApi("write_operation_v2"), "write_operation_v2 (DataFrame.writeTo)");
  // A field without a known API: its name as given.
  EXPECT_EQ(RelationWithApi("some_future_relation"), "some_future_relation");
}

TEST(PlanTranslatorTest, UnsupportedRelationsAreRefusedByName) {
  sc::Relation sample;
  *sample.mutable_sample()->mutable_input() = Range(0, 1, 1);
  PlanTranslator t;
  Result<std::string> q = t.Query(sample);
  ASSERT_TRUE(q.status().IsNotSupported());
  EXPECT_NE(q.status().message().find("the relation sample (DataFrame.sample)"), std::string::npos)
      << q.status().message();
  sc::Relation streaming;
  streaming.mutable_read()->set_is_streaming(true);
  EXPECT_NE(t.Query(streaming).status().message().find("readStream"), std::string::npos);
  sc::Expression window;
  window.mutable_window();
  EXPECT_NE(t.Expr(window).status().message().find("the expression window"), std::string::npos);
}

sc::Expression ColOf(const std::string& name, int64_t plan_id) {
  sc::Expression e = Col(name);
  e.mutable_unresolved_attribute()->set_plan_id(plan_id);
  return e;
}

sc::Relation WithPlanId(sc::Relation r, int64_t plan_id) {
  r.mutable_common()->set_plan_id(plan_id);
  return r;
}

sc::Relation Sql(const std::string& query, int64_t plan_id) {
  sc::Relation r;
  r.mutable_sql()->set_query(query);
  return WithPlanId(r, plan_id);
}

// A schema_of that knows two queries: "SELECT 1 AS id, 'x' AS x" and "SELECT 1 AS ID, 'y' AS y".
TranslationContext TwoTables() {
  TranslationContext ctx;
  ctx.schema_of = [](const std::string& sql) -> Result<engine::Schema> {
    engine::DataType bigint{engine::TypeId::kBigInt};
    engine::DataType text{engine::TypeId::kVarchar};
    if (sql.find("AS x") != std::string::npos) return engine::Schema{{"id", bigint}, {"x", text}};
    if (sql.find("AS y") != std::string::npos) return engine::Schema{{"ID", bigint}, {"y", text}};
    return Status::Internal("unexpected query " + sql);
  };
  return ctx;
}

TEST(PlanTranslatorTest, JoinOnAConditionQualifiesEachSidesColumns) {
  sc::Relation join;
  *join.mutable_join()->mutable_left() = Sql("SELECT 1 AS id, 'x' AS x", 1);
  *join.mutable_join()->mutable_right() = Sql("SELECT 1 AS ID, 'y' AS y", 2);
  join.mutable_join()->set_join_type(sc::Join::JOIN_TYPE_LEFT_OUTER);
  *join.mutable_join()->mutable_join_condition() = Call("==", {ColOf("id", 1), ColOf("id", 2)});
  sc::Relation project;
  *project.mutable_project()->mutable_input() = join;
  *project.mutable_project()->add_expressions() = ColOf("id", 2);
  *project.mutable_project()->add_expressions() = Col("x");
  EXPECT_EQ(Query(project),
            "SELECT _jr0.id, x FROM (SELECT 1 AS id, 'x' AS x) AS _jl0 LEFT OUTER JOIN "
            "(SELECT 1 AS ID, 'y' AS y) AS _jr0 ON (_jl0.id = _jr0.id)");
  // Semi joins give the left side's columns only; no condition is a cross join.
  join.mutable_join()->set_join_type(sc::Join::JOIN_TYPE_LEFT_SEMI);
  EXPECT_EQ(Query(join),
            "SELECT * FROM (SELECT 1 AS id, 'x' AS x) AS _jl0 LEFT SEMI JOIN "
            "(SELECT 1 AS ID, 'y' AS y) AS _jr0 ON (_jl0.id = _jr0.id)");
  join.mutable_join()->set_join_type(sc::Join::JOIN_TYPE_INNER);
  join.mutable_join()->clear_join_condition();
  EXPECT_EQ(Query(join),
            "SELECT * FROM (SELECT 1 AS id, 'x' AS x) AS _jl0 CROSS JOIN "
            "(SELECT 1 AS ID, 'y' AS y) AS _jr0");
}

TEST(PlanTranslatorTest, JoinOnColumnNamesListsSparksColumns) {
  sc::Relation join;
  *join.mutable_join()->mutable_left() = Sql("SELECT 1 AS id, 'x' AS x", 1);
  *join.mutable_join()->mutable_right() = Sql("SELECT 1 AS ID, 'y' AS y", 2);
  join.mutable_join()->add_using_columns("id");
  const std::string from =
      " FROM (SELECT 1 AS id, 'x' AS x) AS _jl0 {} (SELECT 1 AS ID, 'y' AS y) AS _jr0 "
      "ON _jl0.id = _jr0.ID";
  auto expect = [&](sc::Join::JoinType type, const std::string& list, const std::string& kw) {
    join.mutable_join()->set_join_type(type);
    PlanTranslator t(TwoTables());
    Result<std::string> q = t.Query(join);
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    std::string want = "SELECT " + list + from;
    want.replace(want.find("{}"), 2, kw);
    EXPECT_EQ(*q, want);
  };
  expect(sc::Join::JOIN_TYPE_INNER, "_jl0.id AS id, _jl0.x, _jr0.y", "JOIN");
  expect(sc::Join::JOIN_TYPE_RIGHT_OUTER, "_jr0.ID AS ID, _jl0.x, _jr0.y", "RIGHT OUTER JOIN");
  expect(sc::Join::JOIN_TYPE_FULL_OUTER, "COALESCE(_jl0.id, _jr0.ID) AS id, _jl0.x, _jr0.y",
         "FULL OUTER JOIN");
  expect(sc::Join::JOIN_TYPE_LEFT_ANTI, "_jl0.id AS id, _jl0.x", "LEFT ANTI JOIN");
  // A key one side lacks is an analysis error; without a schema the join is refused.
  join.mutable_join()->set_using_columns(0, "nope");
  PlanTranslator t(TwoTables());
  EXPECT_TRUE(t.Query(join).status().IsInvalidArgument());
  PlanTranslator bare;
  EXPECT_TRUE(bare.Query(join).status().IsNotSupported());
}

TEST(PlanTranslatorTest, WithColumnsReplacesInPlaceAndAppends) {
  sc::Relation w;
  *w.mutable_with_columns()->mutable_input() = Sql("SELECT 1 AS id, 'x' AS x", 1);
  sc::Expression::Alias* a = w.mutable_with_columns()->add_aliases();
  a->add_name("z");
  *a->mutable_expr() = Int(7);
  a = w.mutable_with_columns()->add_aliases();
  a->add_name("ID");
  *a->mutable_expr() = Call("+", {Col("id"), Int(1)});
  PlanTranslator t(TwoTables());
  Result<std::string> q = t.Query(w);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(*q, "SELECT (id + 1) AS ID, x, 7 AS z FROM (SELECT 1 AS id, 'x' AS x) AS _s0");

  sc::Relation r;
  *r.mutable_with_columns_renamed()->mutable_input() = Sql("SELECT 1 AS id, 'x' AS x", 1);
  auto* rename = r.mutable_with_columns_renamed()->add_renames();
  rename->set_col_name("X");
  rename->set_new_col_name("label");
  rename = r.mutable_with_columns_renamed()->add_renames();
  rename->set_col_name("missing");  // not a column: no change, as Spark
  rename->set_new_col_name("other");
  PlanTranslator t2(TwoTables());
  q = t2.Query(r);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(*q, "SELECT id, x AS label FROM (SELECT 1 AS id, 'x' AS x) AS _s0");
}

TEST(PlanTranslatorTest, TemporaryViewsAreReadByNameAndInSql) {
  TempViews views;
  views["people"] = TempView{"People", "SELECT 1 AS id"};
  TranslationContext ctx;
  ctx.temp_views = &views;
  PlanTranslator t(ctx);
  sc::Relation read;
  read.mutable_read()->mutable_named_table()->set_unparsed_identifier("PEOPLE");
  EXPECT_EQ(*t.Query(read), "SELECT * FROM (SELECT 1 AS id) AS People");
  EXPECT_EQ(*t.WithTempViews("SELECT * FROM people p WHERE p.id > 0"),
            "WITH People AS (SELECT 1 AS id) SELECT * FROM people p WHERE p.id > 0");
  EXPECT_EQ(*t.WithTempViews("WITH a AS (SELECT 2) SELECT * FROM a, `people`"),
            "WITH People AS (SELECT 1 AS id), a AS (SELECT 2) SELECT * FROM a, `people`");
  // Names that are not a view reference: a column's qualifier part, a function.
  EXPECT_EQ(*t.WithTempViews("SELECT t.people, people(1) FROM t"),
            "SELECT t.people, people(1) FROM t");
}

TEST(PlanTranslatorTest, TemporaryViewsInStatementsAreDerivedTables) {
  TempViews views;
  views["b"] = TempView{"b", "SELECT 1 AS id"};
  TranslationContext ctx;
  ctx.temp_views = &views;
  PlanTranslator t(ctx);
  // foreachBatch's upsert: the view after USING, without and with an alias; `b.id` and a column
  // named b stay as they are.
  EXPECT_EQ(*t.WithTempViews("MERGE INTO silver USING b ON silver.id = b.id "
                             "WHEN MATCHED THEN UPDATE SET v = b"),
            "MERGE INTO silver USING (SELECT 1 AS id) AS b ON silver.id = b.id "
            "WHEN MATCHED THEN UPDATE SET v = b");
  EXPECT_EQ(*t.WithTempViews("MERGE INTO silver s USING B u ON s.id = u.id"),
            "MERGE INTO silver s USING (SELECT 1 AS id) u ON s.id = u.id");
  EXPECT_EQ(*t.WithTempViews("MERGE INTO silver s USING `b` AS u ON s.id = u.id"),
            "MERGE INTO silver s USING (SELECT 1 AS id) AS u ON s.id = u.id");
  EXPECT_EQ(*t.WithTempViews("INSERT INTO t SELECT * FROM b WHERE id > 0"),
            "INSERT INTO t SELECT * FROM (SELECT 1 AS id) AS b WHERE id > 0");
  EXPECT_EQ(*t.WithTempViews("DELETE FROM t WHERE id IN (SELECT id FROM b JOIN b AS c ON TRUE)"),
            "DELETE FROM t WHERE id IN (SELECT id FROM (SELECT 1 AS id) AS b JOIN (SELECT 1 AS "
            "id) AS c ON TRUE)");
  // A view is read only: a statement writing one is refused, naming it.
  for (const char* text : {"INSERT INTO b VALUES (1)", "MERGE INTO b USING t ON b.id = t.id",
                           "UPDATE b SET id = 2", "DELETE FROM b WHERE id = 1"}) {
    Result<std::string> write = t.WithTempViews(text);
    ASSERT_TRUE(write.status().IsNotSupported()) << text;
    EXPECT_NE(write.status().message().find("writes the temporary view 'b'"), std::string::npos);
  }
}

TEST(PlanTranslatorTest, CachedRemoteRelationIsItsSqlWhileCached) {
  sc::Relation rel;
  rel.mutable_cached_remote_relation()->set_relation_id("r1");
  EXPECT_TRUE(PlanTranslator().Query(rel).status().IsNotSupported());  // no cache in context
  TranslationContext ctx;
  ctx.cached_relation = [](const std::string& id) -> std::optional<std::string> {
    if (id == "r1") return std::string("SELECT * FROM delta.`/tmp/b`");
    return std::nullopt;
  };
  PlanTranslator t(ctx);
  EXPECT_EQ(*t.Query(rel), "SELECT * FROM delta.`/tmp/b`");
  rel.mutable_cached_remote_relation()->set_relation_id("gone");
  Result<std::string> gone = t.Query(rel);
  ASSERT_TRUE(gone.status().IsNotFound());
  EXPECT_NE(gone.status().message().find("no cached DataFrame with id gone"), std::string::npos);
}

}  // namespace
}  // namespace sluice::connect
