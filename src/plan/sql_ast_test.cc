#include "plan/sql_ast.h"

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

}  // namespace
}  // namespace sluice::plan
