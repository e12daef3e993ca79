#include "sql/pipeline_schema_check.h"

#include <stdlib.h>

#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace sluice::sql {
namespace {

// A warehouse with `src (id BIGINT, ts TIMESTAMP, s STRING)` holding one row; pipelines are
// built over it and checked with a session on it.
class PipelineSchemaCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sluice_schema_check_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    SessionOptions options;
    options.warehouse = dir_ + "/wh";
    auto session = Session::Open(options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    session_ = std::move(session).ValueOrDie();
    for (const char* sql : {"CREATE TABLE src (id BIGINT, ts TIMESTAMP, s STRING)",
                            "INSERT INTO src VALUES (1, TIMESTAMP '2024-01-01 00:00:00', 'a')"}) {
      auto r = session_->Execute(sql);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
  }
  void TearDown() override {
    session_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Every path under the warehouse, to show that a check wrote nothing.
  std::set<std::string> Files() const {
    std::set<std::string> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_ + "/wh")) {
      out.insert(e.path().string());
    }
    return out;
  }

  // The graph of `text` (tables of the warehouse exist) checked; OK or the errors.
  Status Check(const std::string& text) {
    // Triggered (sluice run --triggered): materialized views may read any streaming table.
    Result<PipelineGraph> graph = BuildPipelineGraph(
        {{"p.sql", text}}, [](const std::string& n) { return n == "src"; }, true);
    if (!graph.ok()) return graph.status();
    return CheckPipelineSchemas(*graph, *session_);
  }

  std::string dir_;
  std::unique_ptr<Session> session_;
};

TEST_F(PipelineSchemaCheckTest, AValidPipelineDerivesEachDatasetsSchemaInGraphOrder) {
  // gold reads silver reads bronze, declared in the reverse order: each reader is checked
  // against the schema its input's query gives, before any of them has a table.
  const std::set<std::string> before = Files();
  Status st = Check(
      "CREATE STREAMING TABLE gold AS SELECT upper(label) AS l, n FROM STREAM silver;\n"
      "CREATE STREAMING TABLE silver AS SELECT s AS label, id * 2 AS n FROM STREAM bronze;\n"
      "CREATE STREAMING TABLE bronze AS SELECT * FROM STREAM src;\n"
      "CREATE MATERIALIZED VIEW m AS SELECT l, CAST(count(*) AS BIGINT) AS c FROM gold GROUP BY "
      "l;\n"
      "CREATE STREAMING TABLE j AS\n"
      "  SELECT b.id, m.c FROM STREAM bronze b JOIN m ON m.l = b.s;\n");
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Files(), before);
}

TEST_F(PipelineSchemaCheckTest, ErrorsNameThePlaceTheDatasetAndTheColumn) {
  const std::set<std::string> before = Files();
  Status st = Check(
      "CREATE STREAMING TABLE silver AS SELECT id, nosuch FROM STREAM bronze;\n"
      "CREATE STREAMING TABLE bronze AS SELECT id, s, ts FROM STREAM src;\n"
      "CREATE STREAMING TABLE f AS SELECT no_such_function(id) AS x FROM STREAM bronze;\n"
      "CREATE STREAMING TABLE w AS SELECT * FROM STREAM bronze\n"
      "  WATERMARK s DELAY OF INTERVAL 10 SECONDS AS b;\n"
      "CREATE STREAMING TABLE t AS SELECT id + s AS x FROM STREAM bronze;\n"
      "CREATE STREAMING TABLE gold AS SELECT * FROM STREAM silver;\n");
  ASSERT_FALSE(st.ok());
  const std::string m = st.message();
  EXPECT_NE(m.find("p.sql:1: streaming table 'silver': Binder Error: Referenced column \"nosuch\""),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("p.sql:3: streaming table 'f': "), std::string::npos) << m;
  EXPECT_NE(m.find("no_such_function"), std::string::npos) << m;
  EXPECT_NE(m.find("p.sql:4: streaming table 'w': WATERMARK s of b: the event-time column s is "
                   "VARCHAR, not a TIMESTAMP"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("p.sql:6: streaming table 't': "), std::string::npos) << m;
  EXPECT_EQ(m.find("Candidate functions"), std::string::npos) << m;  // one line per error
  // gold reads silver, whose check failed: not reported again.
  EXPECT_EQ(m.find("'gold'"), std::string::npos) << m;
  EXPECT_EQ(std::count(m.begin(), m.end(), '\n'), 3) << m;
  EXPECT_EQ(Files(), before);
}

TEST_F(PipelineSchemaCheckTest, MaterializedViewsAndTheirExpectationsAreBound) {
  Status st = Check(
      "CREATE MATERIALIZED VIEW m AS SELECT nope FROM src;\n"
      "CREATE MATERIALIZED VIEW e (CONSTRAINT c EXPECT (missing > 0)) AS SELECT id FROM src;\n"
      "CREATE MATERIALIZED VIEW h AS SELECT CAST(id AS HUGEINT) AS big FROM src;\n");
  ASSERT_FALSE(st.ok());
  const std::string m = st.message();
  EXPECT_NE(m.find("p.sql:1: materialized view 'm': Binder Error: Referenced column \"nope\""),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("p.sql:2: materialized view 'e': its expectations cannot be evaluated over "
                   "its rows: "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("missing"), std::string::npos) << m;
  EXPECT_NE(m.find("p.sql:3: materialized view 'h': column 'big': type HUGEINT has no Delta "
                   "equivalent"),
            std::string::npos)
      << m;
}

TEST_F(PipelineSchemaCheckTest, ExpectationsOutputTypesAndPlannerRefusals) {
  Status st = Check(
      "CREATE STREAMING TABLE a (CONSTRAINT num EXPECT (id + 1)) AS SELECT id FROM STREAM src;\n"
      "CREATE STREAMING TABLE b AS SELECT s, count(*) AS n FROM STREAM src GROUP BY s;\n"
      "CREATE STREAMING TABLE c (id BIGINT) AS SELECT s AS id FROM STREAM src;\n"
      "SET sluice.noSuchSetting = 1;\n");
  ASSERT_FALSE(st.ok());
  const std::string m = st.message();
  EXPECT_NE(m.find("p.sql:1: streaming table 'a': expectation 'num' of 'a': its condition (id + "
                   "1) is BIGINT, not BOOLEAN"),
            std::string::npos)
      << m;
  // Append mode over an aggregation without a watermark: the planner's refusal, before any run.
  EXPECT_NE(m.find("p.sql:2: streaming table 'b': "), std::string::npos) << m;
  EXPECT_NE(m.find("Append output mode not supported"), std::string::npos) << m;
  EXPECT_NE(m.find("p.sql:3: streaming table 'c': its query's output cannot be written to the "
                   "table c: "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("p.sql:4: "), std::string::npos) << m;
}

TEST_F(PipelineSchemaCheckTest, FlowsAreCheckedAgainstTheirTarget) {
  Status st = Check(
      "CREATE STREAMING TABLE all_ids (id BIGINT);\n"
      "CREATE FLOW good AS INSERT INTO all_ids BY NAME SELECT id FROM STREAM src;\n"
      "CREATE FLOW typo AS INSERT INTO all_ids BY NAME SELECT idd AS id FROM STREAM src;\n"
      "CREATE FLOW wrong AS INSERT INTO all_ids BY NAME SELECT ts AS id FROM STREAM src;\n"
      "CREATE STREAMING TABLE reader AS SELECT id + 1 AS next FROM STREAM all_ids;\n");
  ASSERT_FALSE(st.ok());
  const std::string m = st.message();
  EXPECT_EQ(m.find("'good'"), std::string::npos) << m;
  EXPECT_NE(m.find("p.sql:3: flow 'typo': Binder Error: Referenced column \"idd\""),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("p.sql:4: flow 'wrong': its query's output cannot be written to the table "
                   "all_ids: "),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("'reader'"), std::string::npos) << m;  // the declared columns are its input
}

TEST_F(PipelineSchemaCheckTest, ACreateInTheSessionIsCheckedToo) {
  // sluice sql: the same check at CREATE, which then stores nothing.
  Result<engine::Batch> r =
      session_->Execute("CREATE STREAMING TABLE a AS SELECT nosuch FROM STREAM src");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("CREATE STREAMING TABLE a: Binder Error: Referenced column "
                                      "\"nosuch\""),
            std::string::npos)
      << r.status().ToString();
  Result<engine::Batch> shown = session_->Execute("SHOW STREAMING TABLES");
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();
  EXPECT_EQ(shown->num_rows(), 0);
  // A table defined but never refreshed: its reader is checked against its query's schema.
  ASSERT_TRUE(session_->Execute("CREATE STREAMING TABLE b AS SELECT id, s FROM STREAM src").ok());
  Result<engine::Batch> reader =
      session_->Execute("CREATE STREAMING TABLE c AS SELECT ts FROM STREAM b");
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.status().message().find("\"ts\""), std::string::npos)
      << reader.status().ToString();
  EXPECT_TRUE(session_->Execute("CREATE STREAMING TABLE d AS SELECT s FROM STREAM b").ok());
}

}  // namespace
}  // namespace sluice::sql
