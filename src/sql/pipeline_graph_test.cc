#include "sql/pipeline_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "sql/pipeline_live.h"
#include "sql/pipeline_references.h"
#include "sql/pipeline_statement_parser.h"

namespace sluice::sql {
namespace {

Result<PipelineGraph> Build(const std::string& text, std::set<std::string> existing = {}) {
  return BuildPipelineGraph({{"p.sql", text}},
                            [&](const std::string& n) { return existing.count(n) > 0; });
}

std::vector<std::string> Order(const PipelineGraph& g) {
  std::vector<std::string> out;
  for (const PipelineNode& n : g.nodes) {
    out.push_back(n.kind == PipelineNode::Kind::kSetting ? "set@" + std::to_string(n.line)
                                                         : n.name);
  }
  return out;
}

TEST(PipelineGraphTest, OrdersByDependencyNotFileOrder) {
  Result<PipelineGraph> g = Build(
      "CREATE STREAMING TABLE gold AS SELECT k, count(*) AS n FROM STREAM silver GROUP BY k;\n"
      "CREATE STREAMING TABLE silver AS SELECT * FROM STREAM(LIVE.bronze) WHERE k > 0;\n"
      "SET sluice.shufflePartitions = 4;\n"
      "CREATE STREAMING TABLE bronze AS\n"
      "  SELECT * FROM STREAM read_files('in/', format => 'json', schema => 'k INT');\n");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(Order(*g), (std::vector<std::string>{"set@3", "bronze", "silver", "gold"}));
  EXPECT_EQ(g->nodes[1].line, 4);
  EXPECT_EQ(g->nodes[2].reads, (std::vector<std::string>{"bronze"}));
  EXPECT_EQ(g->nodes[2].text.find("LIVE."), std::string::npos);
  EXPECT_EQ(g->nodes[3].depends_on, (std::vector<size_t>{2}));
}

TEST(PipelineGraphTest, FlowsComeAfterTheirTargetAndBeforeItsReaders) {
  Result<PipelineGraph> g = Build(
      "CREATE STREAMING TABLE totals AS SELECT count(*) AS n FROM STREAM orders;\n"
      "CREATE FLOW eu AS INSERT INTO orders BY NAME SELECT * FROM STREAM eu_raw;\n"
      "CREATE STREAMING TABLE orders (id BIGINT);\n",
      {"eu_raw"});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(Order(*g), (std::vector<std::string>{"orders", "eu", "totals"}));
  EXPECT_EQ(g->nodes[1].kind, PipelineNode::Kind::kFlow);
  EXPECT_EQ(g->nodes[1].target, "orders");
}

TEST(PipelineGraphTest, ExistingTablesResolveAndBatchReadsCount) {
  Result<PipelineGraph> g = Build(
      "CREATE STREAMING TABLE enriched AS SELECT e.*, u.name FROM STREAM events e "
      "JOIN users u ON e.uid = u.id WHERE extract(year FROM e.ts) > 2000;\n"
      "CREATE STREAMING TABLE users_copy AS WITH x AS (SELECT * FROM STREAM users) "
      "SELECT * FROM x;\n",
      {"events", "users"});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->nodes[0].reads, (std::vector<std::string>{"events", "users"}));
  EXPECT_EQ(g->nodes[1].reads, (std::vector<std::string>{"users"}));
}

TEST(PipelineGraphTest, RefusesDuplicatesNamingBothPlaces) {
  Result<PipelineGraph> g = Build(
      "CREATE STREAMING TABLE t AS SELECT * FROM STREAM src;\n\n"
      "CREATE OR REFRESH STREAMING TABLE T AS SELECT * FROM STREAM src;\n",
      {"src"});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "p.sql:3: dataset 't' is defined twice: as a streaming table at p.sql:1 and as a "
            "streaming table here");
}

TEST(PipelineGraphTest, RefusesCyclesNamingEachPlace) {
  Result<PipelineGraph> g = Build(
      "CREATE STREAMING TABLE a AS SELECT * FROM STREAM b;\n"
      "CREATE STREAMING TABLE b AS SELECT * FROM STREAM a;\n");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "p.sql:1: the pipeline has a cycle: streaming table 'a' (p.sql:1) reads streaming "
            "table 'b' (p.sql:2), which reads streaming table 'a'");
  Result<PipelineGraph> self = Build("CREATE STREAMING TABLE a AS SELECT * FROM STREAM a;\n");
  ASSERT_FALSE(self.ok());
  EXPECT_EQ(self.status().message(),
            "p.sql:1: the pipeline has a cycle: streaming table 'a' (p.sql:1) reads streaming "
            "table 'a'");
}

TEST(PipelineGraphTest, RefusesUnresolvedNamesAndReportsEveryError) {
  Result<PipelineGraph> g = Build(
      "CREATE STREAMING TABLE silver AS SELECT * FROM STREAM bronz;\n"
      "CREATE FLOW f AS INSERT INTO nowhere SELECT * FROM STREAM silver;\n");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "p.sql:1: streaming table 'silver' reads 'bronz', which is neither defined in the "
            "pipeline nor an existing table\n"
            "p.sql:2: flow 'f' writes to 'nowhere', which is neither defined in the pipeline nor "
            "an existing streaming table or sink");
}

TEST(PipelineGraphTest, SyntaxErrorsNameTheFileLine) {
  Result<PipelineGraph> g = Build(
      "CREATE STREAMING TABLE ok AS SELECT * FROM STREAM src;\n"
      "-- a comment\n"
      "CREATE STREAMING TABLE bad\n"
      "  OUTPUT MODE SIDEWAYS AS SELECT * FROM STREAM src;\n",
      {"src"});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message().rfind("p.sql:3: syntax error at line 4, column ", 0), 0u)
      << g.status().message();
  EXPECT_NE(g.status().message().find("APPEND, UPDATE or COMPLETE"), std::string::npos);
}

TEST(PipelineGraphTest, RefusesStatementsThatAreNotDeclarations) {
  Result<PipelineGraph> g = Build("INSERT INTO t VALUES (1);\nSELECT 1;\n");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("p.sql:1: a pipeline declares datasets"), std::string::npos);
  EXPECT_NE(g.status().message().find("INSERT statements change data"), std::string::npos);
  EXPECT_NE(g.status().message().find("\np.sql:2: "), std::string::npos);
  Result<PipelineGraph> r = Build("REFRESH STREAMING TABLE t;\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("REFRESH and SHOW are not pipeline statements"),
            std::string::npos);
}

TEST(PipelineGraphTest, SeveralFilesShareOneGraph) {
  Result<PipelineGraph> g = BuildPipelineGraph(
      {{"a/silver.sql", "CREATE STREAMING TABLE silver AS SELECT * FROM STREAM bronze"},
       {"a/bronze.sql", "CREATE STREAMING TABLE bronze AS SELECT * FROM STREAM src"}},
      [](const std::string& n) { return n == "src"; });
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(Order(*g), (std::vector<std::string>{"bronze", "silver"}));
  EXPECT_EQ(g->nodes[0].Place(), "a/bronze.sql:1");
}

TEST(PipelineGraphTest, MaterializedViewsAreDatasetsRefreshedByReplacingTheirTable) {
  Result<PipelineGraph> g = Build(
      "CREATE OR REFRESH MATERIALIZED VIEW gold COMMENT 'per key' PARTITIONED BY (k)\n"
      "  TBLPROPERTIES ('delta.appendOnly' = 'false') AS\n"
      "  SELECT k, count(*) AS n FROM LIVE.silver GROUP BY k;\n"
      "CREATE STREAMING TABLE silver TRIGGER AVAILABLE NOW AS SELECT * FROM STREAM src;\n",
      {"src"});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(Order(*g), (std::vector<std::string>{"silver", "gold"}));
  EXPECT_EQ(g->nodes[1].kind, PipelineNode::Kind::kMaterializedView);
  EXPECT_EQ(g->nodes[1].text,
            "CREATE OR REPLACE TABLE gold PARTITIONED BY (k) TBLPROPERTIES ('delta.appendOnly' = "
            "'false') AS SELECT k, count(*) AS n FROM silver GROUP BY k");
  EXPECT_EQ(g->nodes[1].reads, (std::vector<std::string>{"silver"}));
}

TEST(PipelineGraphTest, RefusesStreamsOfViewsAndViewsOfContinuousTables) {
  Result<PipelineGraph> g = Build(
      "CREATE MATERIALIZED VIEW mv AS SELECT * FROM src;\n"
      "CREATE STREAMING TABLE s AS SELECT * FROM STREAM mv;\n"
      "CREATE STREAMING TABLE c AS SELECT * FROM STREAM src;\n"
      "CREATE MATERIALIZED VIEW over_c AS SELECT count(*) AS n FROM c;\n",
      {"src"});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "p.sql:2: streaming table 's' reads materialized view 'mv' (p.sql:1) as a STREAM: a "
            "materialized view is recomputed by each refresh, not appended to; read it without "
            "STREAM, or make 'mv' a streaming table\n"
            "p.sql:4: materialized view 'over_c' reads streaming table 'c' (p.sql:3), which runs "
            "until stopped: a materialized view is refreshed once its inputs have processed what "
            "is available; give 'c' TRIGGER AVAILABLE NOW (or ONCE)");
}

TEST(PipelineGraphTest, ExpectationsOnTablesAndViewsColumnDefinitionsOnViewsRefused) {
  Result<PipelineGraph> ok = Build(
      "CREATE STREAMING TABLE t (CONSTRAINT ok EXPECT (v > 0) ON VIOLATION DROP ROW)\n"
      "  TRIGGER AVAILABLE NOW AS SELECT * FROM STREAM src;\n"
      "CREATE MATERIALIZED VIEW m (CONSTRAINT pos EXPECT (v > 0) ON VIOLATION DROP ROW,\n"
      "  CONSTRAINT has_k EXPECT (k IS NOT NULL) ON VIOLATION FAIL UPDATE)\n"
      "  AS SELECT k, v FROM LIVE.t;\n",
      {"src"});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  const PipelineNode& m = ok->nodes[1];
  ASSERT_EQ(m.name, "m");
  EXPECT_EQ(m.query, "SELECT k, v FROM t");
  ASSERT_EQ(m.expectations.size(), 2u);
  EXPECT_EQ(m.expectations[1].action, Expectation::Action::kFailUpdate);
  // The refresh writes only the rows that pass the DROP ROW expectation.
  EXPECT_EQ(m.text,
            "CREATE OR REPLACE TABLE m AS SELECT * FROM (SELECT k, v FROM t) AS __expect WHERE "
            "coalesce((v > 0), true)");

  Result<PipelineGraph> g = Build("CREATE MATERIALIZED VIEW m (a INT) AS SELECT 1 AS a;\n", {});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("p.sql:1: column definitions on a materialized view are "
                                      "not supported yet (at line 1, column 28)"),
            std::string::npos)
      << g.status().message();
}

TEST(PipelineStatementParserTest, ParsesOnlyMaterializedViews) {
  EXPECT_FALSE(ParseMaterializedView("CREATE VIEW v AS SELECT 1")->has_value());
  EXPECT_FALSE(ParseMaterializedView("SELECT 1")->has_value());
  Result<std::optional<CreateMaterializedViewStatement>> bad =
      ParseMaterializedView("CREATE MATERIALIZED VIEW m AS");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("expected a query after AS"), std::string::npos);
}

TEST(PipelineLiveTest, DropsTheLivePrefixOnly) {
  EXPECT_EQ(*StripLivePrefix("SELECT * FROM LIVE.a JOIN live.b ON a.live = b.x"),
            "SELECT * FROM a JOIN b ON a.live = b.x");
  EXPECT_EQ(*StripLivePrefix("SELECT 'LIVE.a', \"live\".x FROM STREAM(LIVE.t)"),
            "SELECT 'LIVE.a', \"live\".x FROM STREAM(t)");
}

TEST(PipelineReferencesTest, FindsStreamsTablesAndChanges) {
  Result<QueryReads> r = ReadsOfQuery(
      "SELECT * FROM STREAM table_changes('Orders', 0) o LEFT JOIN dim d ON o.k = d.k "
      "WHERE o.x IN (SELECT x FROM allow) AND trim(BOTH ' ' FROM o.s) <> ''");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->streams, (std::vector<std::string>{"orders"}));
  EXPECT_EQ(r->tables, (std::vector<std::string>{"dim", "allow"}));
  Result<QueryReads> d =
      ReadsOfQuery("SELECT * FROM STREAM s WHERE a IS DISTINCT FROM b OR a IS NOT DISTINCT FROM c");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->tables.empty());
  Result<QueryReads> q = ReadsOfQuery("SELECT * FROM delta.`/data/t`, read_files('x')");
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q->tables.empty());
}

TEST(PipelineGraphTest, ViewsAreInlinedWhereTheyAreRead) {
  Result<PipelineGraph> g = Build(
      "CREATE TEMPORARY VIEW cleaned AS SELECT k, v FROM STREAM(LIVE.bronze) WHERE v > 0;\n"
      "CREATE STREAMING TABLE silver TRIGGER AVAILABLE NOW AS SELECT * FROM STREAM(LIVE.cleaned);\n"
      "CREATE STREAMING TABLE bronze TRIGGER AVAILABLE NOW AS SELECT * FROM STREAM src;\n"
      "CREATE OR REPLACE VIEW dims COMMENT 'the dimension'\n"
      "  AS SELECT * FROM dim;\n"
      "CREATE VIEW dims2 AS SELECT k FROM LIVE.dims WHERE k <> 'x';\n"
      "CREATE MATERIALIZED VIEW m AS SELECT d.k, EXTRACT(year FROM dims) AS y\n"
      "  FROM dims2 d JOIN LIVE.silver s ON d.k = s.k;\n",
      {"src", "dim"});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::map<std::string, const PipelineNode*> by_name;
  for (const PipelineNode& n : g->nodes) by_name[n.name] = &n;
  const PipelineNode& silver = *by_name.at("silver");
  EXPECT_EQ(silver.text,
            "CREATE STREAMING TABLE silver TRIGGER AVAILABLE NOW AS SELECT * FROM (SELECT k, v "
            "FROM STREAM(bronze) WHERE v > 0) AS cleaned");
  EXPECT_EQ(silver.reads, (std::vector<std::string>{"bronze"}));
  // A view of a view, an alias kept, a name inside EXTRACT(... FROM ...) left alone; the newline
  // of the inlined view became a space, so the lines stay the file's.
  const PipelineNode& m = *by_name.at("m");
  EXPECT_EQ(m.query,
            "SELECT d.k, EXTRACT(year FROM dims) AS y\n  FROM (SELECT k FROM (SELECT * FROM dim) "
            "AS dims WHERE k <> 'x') d JOIN silver s ON d.k = s.k");
  EXPECT_EQ(m.reads, (std::vector<std::string>{"dim", "silver"}));
  EXPECT_EQ(by_name.at("cleaned")->kind, PipelineNode::Kind::kView);
  EXPECT_TRUE(by_name.at("cleaned")->text.empty());  // a view runs nothing
  // Silver after bronze, m after silver.
  std::vector<std::string> order = Order(*g);
  auto pos = [&](const std::string& n) { return std::find(order.begin(), order.end(), n); };
  EXPECT_LT(pos("bronze"), pos("silver"));
  EXPECT_LT(pos("silver"), pos("m"));
}

TEST(PipelineGraphTest, ViewRefusals) {
  Result<PipelineGraph> g = Build(
      "CREATE VIEW dims AS SELECT * FROM dim;\n"
      "CREATE STREAMING TABLE s AS SELECT * FROM STREAM dims;\n"
      "CREATE VIEW cols (x) AS SELECT 1 AS x;\n",
      {"src", "dim"});
  ASSERT_FALSE(g.ok());
  const std::string m = g.status().message();
  EXPECT_NE(m.find("p.sql:2: view 'dims' is read as a STREAM (at line 2, column 43), but its "
                   "query reads no STREAM"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("p.sql:3: a column list on a view is not supported yet"), std::string::npos)
      << m;
  // (Checked once every statement parsed.)
  Result<PipelineGraph> mv = Build(
      "CREATE VIEW sv AS SELECT * FROM STREAM src;\n"
      "CREATE MATERIALIZED VIEW mv AS SELECT * FROM sv;\n",
      {"src"});
  ASSERT_FALSE(mv.ok());
  EXPECT_NE(mv.status().message().find("p.sql:2: materialized view 'mv' reads 'src' as a STREAM "
                                       "(directly or through a view)"),
            std::string::npos)
      << mv.status().message();
}

TEST(PipelineGraphTest, ViewsThatReadEachOtherAreACycle) {
  Result<PipelineGraph> g = Build(
      "CREATE VIEW a AS SELECT * FROM b;\n"
      "CREATE VIEW b AS SELECT * FROM a;\n",
      {});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(
      g.status().message().find("the pipeline has a cycle: view 'a' (p.sql:1) reads view 'b'"),
      std::string::npos)
      << g.status().message();
}

}  // namespace
}  // namespace sluice::sql
