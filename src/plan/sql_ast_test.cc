#include "plan/sql_ast.h"

#include <set>

#include <gtest/gtest.h>

namespace sluice::plan {
namespace {

TEST(SqlAstTest, RewriteWindowCalls) {
  auto r = RewriteWindowCalls(
      "SELECT window.start, session_window.end, x.window FROM t GROUP BY window(ts, '5 "
      "seconds'), session_window(ts, '1 minute')");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r,
            "SELECT \"window\".start, \"session_window\".end, x.\"window\" FROM t GROUP BY "
            "__sluice_window(ts, '5 seconds'), __sluice_session_window(ts, '1 minute')");
}

class SqlAstEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = engine::Engine::Open();
    ASSERT_TRUE(e.ok());
    engine_ = std::move(*e);
    auto a = SqlAst::Open(engine_.get());
    ASSERT_TRUE(a.ok());
    ast_ = std::move(*a);
  }
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<SqlAst> ast_;
};

TEST_F(SqlAstEngineTest, ParseRewriteAndPrintBack) {
  auto tree =
      ast_->ParseSelect("SELECT a + 1 AS b, count(*) FROM t WHERE a > 1 AND c = 'x' GROUP BY a");
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  EXPECT_EQ(tree->value("type", ""), "SELECT_NODE");
  const Json& items = (*tree)["select_list"];
  ASSERT_EQ(items.size(), 2u);
  EXPECT_TRUE(IsAggregateCall(items[1]));
  EXPECT_FALSE(ContainsAggregate(items[0]));
  EXPECT_EQ(Conjuncts((*tree)["where_clause"]).size(), 2u);
  // a + 1 and A+1 are the same expression; aliases do not matter.
  auto other = ast_->ParseSelect("SELECT A+1 FROM t");
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(SameExpression(items[0], (*other)["select_list"][0]));
  // Replace column a by column z and print the tree back.
  Json node = *tree;
  node["select_list"][0] = RewriteExpression(items[0], [](const Json& e) -> std::optional<Json> {
    if (ColumnRefNames(e) == std::vector<std::string>{"a"}) return MakeColumnRef({"z"});
    return std::nullopt;
  });
  auto sql = ast_->ToSql(node);
  ASSERT_TRUE(sql.ok()) << sql.status().ToString();
  EXPECT_NE(sql->find("(z + 1) AS b"), std::string::npos) << *sql;
  auto text = ast_->ExpressionToSql(items[1]);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "count_star()");
  EXPECT_FALSE(ast_->ParseSelect("SELEC 1").ok());
  EXPECT_FALSE(ast_->ParseSelect("SELECT 1; SELECT 2").ok());
}

// The builders the planners use print back as DuckDB's own trees of the same SQL would.
TEST_F(SqlAstEngineTest, BuiltNodesPrintBack) {
  auto tree = ast_->ParseSelect("SELECT a AS x FROM t WHERE a > 1 AND b = 2");
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  const std::vector<Json> conjuncts = Conjuncts((*tree)["where_clause"]);
  ASSERT_EQ(conjuncts.size(), 2u);
  auto both = ast_->ExpressionToSql(MakeConjunctionAnd(conjuncts));
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(*both, "((a > 1) AND (b = 2))");
  auto one = ast_->ExpressionToSql(MakeConjunctionAnd({conjuncts[0]}));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, "(a > 1)");
  auto unnest = ast_->ExpressionToSql(MakeUnnestCall("l"));
  ASSERT_TRUE(unnest.ok()) << unnest.status().ToString();
  EXPECT_EQ(*unnest, "unnest(l)");
  const Json& item = (*tree)["select_list"][0];
  EXPECT_EQ(Alias(item), "x");
  EXPECT_EQ(Alias(WithoutAlias(item)), "");
  EXPECT_TRUE(SameExpression(WithoutAlias(item), item));
  EXPECT_TRUE(IsAnnotationKey("alias"));
  EXPECT_TRUE(IsAnnotationKey("query_location"));
  EXPECT_FALSE(IsAnnotationKey("children"));
}

// ---- Golden tests: the parse-tree shape DuckDB gives each construct the planners read ----
// A DuckDB upgrade that changes a key or a node kind fails here, by construct, before it reaches
// the planners (sql_ast.h's typed accessors are the only readers of these keys).

TEST_F(SqlAstEngineTest, GoldenSelectNodeClauses) {
  auto t = ast_->ParseSelect(
      "SELECT a AS x, count(*) FROM t WHERE a > 1 GROUP BY a HAVING count(*) > 2 QUALIFY "
      "row_number() OVER (PARTITION BY a ORDER BY b DESC) = 1");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(IsSelectNode(*t));
  ASSERT_EQ(SelectList(*t).size(), 2u);
  EXPECT_EQ(Alias(SelectList(*t)[0]), "x");
  EXPECT_EQ(ExpressionClass(SelectList(*t)[0]), "COLUMN_REF");
  EXPECT_EQ(FunctionName(SelectList(*t)[1]), "count_star");
  EXPECT_EQ(NodeType(FromTable(*t)), "BASE_TABLE");
  EXPECT_EQ(BaseTableName(FromTable(*t)), "t");
  EXPECT_EQ(ExpressionClass(WhereClause(*t)), "COMPARISON");
  EXPECT_EQ(NodeType(WhereClause(*t)), "COMPARE_GREATERTHAN");
  EXPECT_EQ(ColumnRefNames(ComparisonLeft(WhereClause(*t))), std::vector<std::string>{"a"});
  EXPECT_EQ(IntegerConstant(ComparisonRight(WhereClause(*t))), 1);
  ASSERT_EQ(GroupExpressions(*t).size(), 1u);
  ASSERT_EQ(GroupSets(*t).size(), 1u);
  EXPECT_EQ(ExpressionClass(Having(*t)), "COMPARISON");
  const Json& q = Qualify(*t);
  EXPECT_EQ(NodeType(q), "COMPARE_EQUAL");
  const Json& w = ComparisonLeft(q);
  EXPECT_EQ(ExpressionClass(w), "WINDOW");
  EXPECT_EQ(NodeType(w), "WINDOW_ROW_NUMBER");
  ASSERT_EQ(WindowPartitions(w).size(), 1u);
  ASSERT_EQ(WindowOrders(w).size(), 1u);
  EXPECT_EQ(OrderType(WindowOrders(w)[0]), "DESCENDING");
  EXPECT_EQ(ColumnRefNames(OrderExpression(WindowOrders(w)[0])), std::vector<std::string>{"b"});
  EXPECT_TRUE(WindowFilter(w).is_null());
  EXPECT_TRUE(Children(w).empty());
  EXPECT_FALSE(WindowIgnoresNulls(w));
  EXPECT_TRUE(WindowArgOrders(w).empty());
  EXPECT_FALSE(GroupsByAll(*t));
  EXPECT_TRUE(Modifiers(*t).empty());
  // An absent clause reads as null, without inserting it.
  auto plain = ast_->ParseSelect("SELECT 1");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(WhereClause(*plain).is_null());
  EXPECT_TRUE(Having(*plain).is_null());
  EXPECT_TRUE(Qualify(*plain).is_null());
  const Json not_a_node = 1;
  EXPECT_TRUE(SelectList(not_a_node).is_null());
  EXPECT_EQ(NodeType(not_a_node), "");
}

TEST_F(SqlAstEngineTest, GoldenGroupingForms) {
  auto all = ast_->ParseSelect("SELECT a, count(*) FROM t GROUP BY ALL");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(GroupsByAll(*all));
  auto sets = ast_->ParseSelect("SELECT a, b FROM t GROUP BY GROUPING SETS ((a), (b))");
  ASSERT_TRUE(sets.ok());
  EXPECT_EQ(GroupSets(*sets).size(), 2u);
  Json node = *sets;
  DropAggregationAndModifiers(node);
  auto sql = ast_->ToSql(node);
  ASSERT_TRUE(sql.ok()) << sql.status().ToString();
  EXPECT_EQ(*sql, "SELECT a, b FROM t");
}

TEST_F(SqlAstEngineTest, GoldenModifiers) {
  auto t = ast_->ParseSelect("SELECT DISTINCT ON (a) a, b FROM t ORDER BY b ASC NULLS FIRST");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(Modifiers(*t).size(), 2u);
  EXPECT_TRUE(HasModifier(*t, "DISTINCT_MODIFIER"));
  EXPECT_TRUE(HasModifier(*t, "ORDER_MODIFIER"));
  for (const Json& m : Modifiers(*t)) {
    if (NodeType(m) == "DISTINCT_MODIFIER") {
      EXPECT_EQ(DistinctOnTargets(m).size(), 1u);
    } else {
      ASSERT_EQ(ModifierOrders(m).size(), 1u);
      EXPECT_EQ(OrderType(ModifierOrders(m)[0]), "ASCENDING");
      EXPECT_EQ(OrderNullOrder(ModifierOrders(m)[0]), "NULLS FIRST");
    }
  }
  auto d = ast_->ParseSelect("SELECT DISTINCT a FROM t");
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(Modifiers(*d).size(), 1u);
  EXPECT_TRUE(DistinctOnTargets(Modifiers(*d)[0]).empty());
  auto l = ast_->ParseSelect("SELECT a FROM t LIMIT 5 OFFSET 2");
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(Modifiers(*l).size(), 1u);
  EXPECT_EQ(NodeType(Modifiers(*l)[0]), "LIMIT_MODIFIER");
  EXPECT_EQ(IntegerConstant(LimitCount(Modifiers(*l)[0])), 5);
  EXPECT_EQ(IntegerConstant(LimitOffset(Modifiers(*l)[0])), 2);
  auto no_offset = ast_->ParseSelect("SELECT a FROM t LIMIT 5");
  ASSERT_TRUE(no_offset.ok());
  EXPECT_TRUE(LimitOffset(Modifiers(*no_offset)[0]).is_null());
}

TEST_F(SqlAstEngineTest, GoldenTableRefs) {
  auto j = ast_->ParseSelect(
      "SELECT * FROM __stream_0 AS l LEFT JOIN (SELECT * FROM __stream_1) AS r ON l.k = r.k");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  const Json& from = FromTable(*j);
  EXPECT_EQ(NodeType(from), "JOIN");
  EXPECT_EQ(JoinType(from), "LEFT");
  EXPECT_EQ(JoinRefType(from), "REGULAR");
  EXPECT_TRUE(JoinUsingColumns(from).empty());
  EXPECT_EQ(NodeType(JoinCondition(from)), "COMPARE_EQUAL");
  EXPECT_EQ(StreamIndexOf(JoinLeft(from)), 0u);
  EXPECT_EQ(Alias(JoinLeft(from)), "l");
  EXPECT_EQ(NodeType(JoinRight(from)), "SUBQUERY");
  EXPECT_EQ(Alias(JoinRight(from)), "r");
  EXPECT_TRUE(IsSelectNode(SubqueryNode(JoinRight(from))));
  EXPECT_EQ(StreamIndexOf(FromTable(SubqueryNode(JoinRight(from)))), 1u);
  std::set<size_t> streams;
  CollectStreams(*j, &streams);
  EXPECT_EQ(streams, (std::set<size_t>{0, 1}));
  EXPECT_TRUE(ReadsStream(JoinRight(from)));
  EXPECT_EQ(StreamIndexOf(MakeBaseTableRef("__stream_12x", "")), std::nullopt);

  auto u = ast_->ParseSelect("SELECT * FROM a JOIN b USING (k)");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(JoinUsingColumns(FromTable(*u)).size(), 1u);
  EXPECT_TRUE(JoinCondition(FromTable(*u)).is_null());
  auto semi = ast_->ParseSelect("SELECT * FROM a SEMI JOIN b ON a.k = b.k");
  ASSERT_TRUE(semi.ok());
  EXPECT_EQ(JoinType(FromTable(*semi)), "SEMI");
  auto cross = ast_->ParseSelect("SELECT * FROM a CROSS JOIN b");
  ASSERT_TRUE(cross.ok());
  EXPECT_EQ(JoinRefType(FromTable(*cross)), "CROSS");

  // A built ref prints back as a plain table with its alias and column aliases.
  auto s = ast_->ParseSelect("SELECT x FROM (SELECT 1) AS s(x)");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(ColumnNameAliases(FromTable(*s)).size(), 1u);
  Json node = *s;
  FromTable(node) =
      MakeBaseTableRef("__stage_0", Alias(FromTable(*s)), ColumnNameAliases(FromTable(*s)));
  auto sql = ast_->ToSql(node);
  ASSERT_TRUE(sql.ok()) << sql.status().ToString();
  EXPECT_EQ(*sql, "SELECT x FROM __stage_0 AS s(x)");
}

TEST_F(SqlAstEngineTest, GoldenSetOperation) {
  auto t = ast_->ParseSelect("SELECT a FROM x UNION ALL SELECT a FROM y");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(NodeType(*t), "SET_OPERATION_NODE");
  EXPECT_EQ(SetOperationType(*t), "UNION");
  EXPECT_TRUE(SetOperationAll(*t));
  std::vector<const Json*> inputs = SetOperationInputs(*t);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(BaseTableName(FromTable(*inputs[0])), "x");
  EXPECT_EQ(BaseTableName(FromTable(*inputs[1])), "y");
  auto distinct = ast_->ParseSelect("SELECT a FROM x UNION SELECT a FROM y");
  ASSERT_TRUE(distinct.ok());
  EXPECT_FALSE(SetOperationAll(*distinct));
}

TEST_F(SqlAstEngineTest, GoldenExpressions) {
  auto t = ast_->ParseSelect(
      "SELECT CAST(a AS BIGINT), INTERVAL '5 seconds', INTERVAL 3 MINUTES, a BETWEEN 1 AND 2, "
      "'s', NULL, sum(DISTINCT a), count(a) FILTER (WHERE a > 0), string_agg(b, ',' ORDER BY a) "
      "FROM t");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const Json& items = SelectList(*t);
  ASSERT_EQ(items.size(), 9u);
  EXPECT_EQ(ExpressionClass(items[0]), "CAST");
  EXPECT_EQ(CastTypeId(items[0]), "BIGINT");
  EXPECT_EQ(ColumnRefNames(CastChild(items[0])), std::vector<std::string>{"a"});
  // INTERVAL '5 seconds' is a CAST of a string constant; INTERVAL 3 MINUTES a to_minutes call.
  EXPECT_EQ(CastTypeId(items[1]), "INTERVAL");
  EXPECT_EQ(StringConstant(items[1]), "5 seconds");
  EXPECT_FALSE(IsIntervalConstant(items[1]));
  EXPECT_EQ(FunctionName(items[2]), "to_minutes");
  ASSERT_EQ(Children(items[2]).size(), 1u);
  EXPECT_EQ(NodeType(items[3]), "COMPARE_BETWEEN");
  EXPECT_EQ(ColumnRefNames(BetweenInput(items[3])), std::vector<std::string>{"a"});
  EXPECT_EQ(IntegerConstant(BetweenLower(items[3])), 1);
  EXPECT_EQ(IntegerConstant(BetweenUpper(items[3])), 2);
  EXPECT_EQ(StringConstant(items[4]), "s");
  EXPECT_EQ(ConstantText(items[4]), "s");
  EXPECT_EQ(ExpressionClass(items[5]), "CONSTANT");
  EXPECT_EQ(ConstantText(items[5]), std::nullopt);
  EXPECT_EQ(IntegerConstant(items[5]), std::nullopt);
  EXPECT_TRUE(IsDistinctCall(items[6]));
  EXPECT_FALSE(IsDistinctCall(items[7]));
  EXPECT_FALSE(AggregateFilter(items[7]).is_null());
  EXPECT_TRUE(AggregateFilter(items[6]).is_null());
  EXPECT_TRUE(HasCallOrderBy(items[8]));
  EXPECT_FALSE(HasCallOrderBy(items[6]));
  EXPECT_TRUE(IsExpressionObject(items[0]));
  EXPECT_FALSE(IsExpressionObject(FromTable(*t)));
  Json e = items[0];
  SetAlias(e, "c");
  EXPECT_EQ(Alias(e), "c");
}

TEST_F(SqlAstEngineTest, GoldenStarForms) {
  auto t = ast_->ParseSelect(
      "SELECT *, l.*, * EXCLUDE (a), * REPLACE (a + 1 AS a), * RENAME (a AS z), COLUMNS('a.*'), "
      "* EXCLUDE (l.a) FROM l");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const Json& items = SelectList(*t);
  ASSERT_EQ(items.size(), 7u);
  for (const Json& item : items) EXPECT_EQ(ExpressionClass(item), "STAR") << item.dump();
  EXPECT_TRUE(IsPlainStar(items[0]));
  EXPECT_EQ(StarRelation(items[0]), "");
  EXPECT_TRUE(IsPlainStar(items[1]));
  EXPECT_EQ(StarRelation(items[1]), "l");
  EXPECT_FALSE(IsPlainStar(items[2]));
  EXPECT_FALSE(StarHasMoreThanExclude(items[2]));
  ASSERT_EQ(StarExcludeList(items[2]).size(), 1u);
  EXPECT_EQ(StarExcludeList(items[2])[0], "a");
  for (size_t i = 3; i < items.size(); ++i) {
    EXPECT_FALSE(IsPlainStar(items[i])) << i;
    EXPECT_TRUE(StarHasMoreThanExclude(items[i])) << i << ": " << items[i].dump();
  }
}

}  // namespace
}  // namespace sluice::plan
