#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "engine/engine.h"
#include "engine/test_util.h"

namespace sluice::engine {
namespace {

using ConnectionTest = testing::EngineTest;

TEST_F(ConnectionTest, QueryReturnsRows) {
  Batch b = Q("SELECT 42 AS x, 'a' AS s UNION ALL SELECT 43, NULL ORDER BY x");
  ASSERT_EQ(b.num_rows(), 2);
  ASSERT_EQ(b.num_columns(), 2u);
  EXPECT_EQ(b.schema()[0].name, "x");
  EXPECT_EQ(b.schema()[0].type.id, TypeId::kInteger);
  EXPECT_EQ(**b.GetInt64(1, 0), 43);
  EXPECT_EQ(*b.GetString(0, 1), "a");
  EXPECT_TRUE(b.IsNull(1, 1));
}

TEST_F(ConnectionTest, MultipleStatementsReturnTheLast) {
  Batch b =
      Q("CREATE TABLE t(i INTEGER); INSERT INTO t VALUES (1), (2); SELECT sum(i) AS s FROM t");
  ASSERT_EQ(b.num_rows(), 1);
  EXPECT_EQ(b.schema()[0].name, "s");
  EXPECT_EQ(**b.GetInt64(0, 0), 3);
}

TEST_F(ConnectionTest, StatementsWithoutRowsGiveAnEmptyBatch) {
  Batch b = Q("CREATE TABLE t(i INTEGER)");
  EXPECT_EQ(b.num_columns(), 0u);
  EXPECT_EQ(b.num_rows(), 0);
  EXPECT_EQ(Q("").num_columns(), 0u);
  EXPECT_EQ(Q("  ;  ").num_columns(), 0u);
  ASSERT_TRUE(conn_->Execute("INSERT INTO t VALUES (5)").ok());
  EXPECT_EQ(Scalar("SELECT i FROM t"), "5");
}

TEST_F(ConnectionTest, ParserErrorIsInvalidArgument) {
  auto r = conn_->Query("SELEC 1");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("Parser Error: syntax error at or near \"SELEC\""),
            std::string::npos)
      << r.status().message();
}

// Errors are one line, without DuckDB's "LINE 1: <SQL> ^" fragment, which quotes the SQL Sluice
// generated (issue 24 #11).
TEST_F(ConnectionTest, ErrorsAreOneLineWithoutTheSqlFragment) {
  auto r = conn_->Query("SELECT avg(epoch_ms(range)::DOUBLE) FROM range(1) AS __stream_0");
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  EXPECT_NE(m.find("Unimplemented type for cast"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_EQ(m.find("LINE 1"), std::string::npos) << m;
  EXPECT_EQ(m.find("__stream_0"), std::string::npos) << m;
  auto binder = conn_->Query("SELECT nope FROM range(1) AS t");
  ASSERT_FALSE(binder.ok());
  EXPECT_EQ(binder.status().message().find('\n'), std::string::npos) << binder.status().message();
  EXPECT_NE(binder.status().message().find("Referenced column \"nope\" not found"),
            std::string::npos)
      << binder.status().message();
}

TEST_F(ConnectionTest, MissingTableIsNotFoundWithDuckDbMessage) {
  auto r = conn_->Query("SELECT * FROM nope");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsNotFound()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("Catalog Error: Table with name nope does not exist!"),
            std::string::npos)
      << r.status().message();
  // DuckDB's suggestion of one of its own catalogs is no help to a user.
  EXPECT_EQ(r.status().message().find("Did you mean"), std::string::npos) << r.status().message();
  ASSERT_TRUE(conn_->Execute("CREATE TABLE orders (id INTEGER)").ok());
  auto near = conn_->Query("SELECT * FROM ordrs");
  ASSERT_FALSE(near.ok());
  EXPECT_NE(near.status().message().find("Did you mean \"orders\""), std::string::npos)
      << near.status().message();
}

TEST_F(ConnectionTest, OtherUserErrors) {
  auto binder = conn_->Query("SELECT nope FROM range(1)");
  ASSERT_FALSE(binder.ok());
  EXPECT_TRUE(binder.status().IsInvalidArgument()) << binder.status().ToString();
  EXPECT_NE(binder.status().message().find("Binder Error"), std::string::npos);

  auto conversion = conn_->Query("SELECT 'abc'::INTEGER");
  ASSERT_FALSE(conversion.ok());
  EXPECT_TRUE(conversion.status().IsInvalidArgument()) << conversion.status().ToString();
  EXPECT_NE(conversion.status().message().find("Conversion Error"), std::string::npos);

  ASSERT_TRUE(conn_->Execute("CREATE TABLE t(i INTEGER)").ok());
  auto exists = conn_->Execute("CREATE TABLE t(i INTEGER)");
  EXPECT_TRUE(exists.IsAlreadyExists()) << exists.ToString();

  auto missing_file = conn_->Query("SELECT * FROM read_json('/nonexistent/x.json')");
  ASSERT_FALSE(missing_file.ok());
  EXPECT_TRUE(missing_file.status().IsNotFound()) << missing_file.status().ToString();
}

TEST_F(ConnectionTest, ErrorStopsLaterStatements) {
  auto r = conn_->Query("CREATE TABLE a(i INTEGER); SELECT * FROM nope; CREATE TABLE b(i INTEGER)");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsNotFound());
  EXPECT_TRUE(conn_->Execute("SELECT * FROM a").ok());
  EXPECT_TRUE(conn_->Execute("SELECT * FROM b").IsNotFound());
}

TEST_F(ConnectionTest, JsonAndParquetFunctionsAreAvailable) {
  EXPECT_EQ(Scalar("SELECT json_extract('{\"a\": {\"b\": 7}}', '$.a.b')::INTEGER"), "7");
  EXPECT_EQ(Scalar("SELECT count(*) FROM duckdb_extensions() WHERE loaded AND "
                   "extension_name IN ('parquet', 'json')"),
            "2");
  EXPECT_EQ(Scalar("SELECT current_setting('autoload_known_extensions')"), "false");
  EXPECT_EQ(Scalar("SELECT current_setting('autoinstall_known_extensions')"), "false");
  EXPECT_EQ(Scalar("SELECT current_setting('threads')"), "1");
  EXPECT_EQ(Scalar("SELECT current_setting('TimeZone')"), "UTC");
}

TEST_F(ConnectionTest, RegisterBatchAndSelectSomeColumns) {
  Batch b =
      Q("SELECT i AS a, i * 2 AS b, 'row' || i AS c, [i] AS d, {'x': i} AS e "
        "FROM range(10000) t(i)");
  ASSERT_TRUE(conn_->RegisterBatch("v", b).ok());
  // Only some columns, in another order, with a filter and an aggregate.
  EXPECT_EQ(Scalar("SELECT sum(b) FROM v WHERE a >= 5000"),
            std::to_string(2 * (5000LL + 9999) * 5000 / 2));
  EXPECT_EQ(Scalar("SELECT c FROM v WHERE a = 1234"), "row1234");
  EXPECT_EQ(Scalar("SELECT e.x FROM v WHERE a = 77"), "77");
  EXPECT_EQ(Scalar("SELECT count(*) FROM v"), "10000");
  Batch sub = Q("SELECT c, a FROM v ORDER BY a DESC LIMIT 2");
  ASSERT_EQ(sub.num_rows(), 2);
  EXPECT_EQ(*sub.GetString(0, 0), "row9999");
  // Joins with itself and with a table.
  ASSERT_TRUE(conn_->Execute("CREATE TABLE k AS SELECT 42 AS a").ok());
  EXPECT_EQ(Scalar("SELECT v.c FROM v JOIN k USING (a)"), "row42");
  EXPECT_EQ(Scalar("SELECT count(*) FROM v v1 JOIN v v2 ON v1.a = v2.b"), "5000");
  // Names are case-insensitive like any DuckDB table name.
  EXPECT_EQ(Scalar("SELECT count(*) FROM V"), "10000");
}

TEST_F(ConnectionTest, RegisterReplacesAndUnregisterDrops) {
  ASSERT_TRUE(conn_->RegisterBatch("v", Q("SELECT 1 AS x")).ok());
  EXPECT_EQ(Scalar("SELECT x FROM v"), "1");
  ASSERT_TRUE(conn_->RegisterBatch("v", Q("SELECT 'two' AS y")).ok());
  EXPECT_EQ(Scalar("SELECT y FROM v"), "two");
  ASSERT_TRUE(conn_->UnregisterBatch("v").ok());
  auto gone = conn_->Query("SELECT * FROM v");
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(gone.status().IsNotFound()) << gone.status().ToString();
  EXPECT_TRUE(conn_->UnregisterBatch("v").ok());  // idempotent
  EXPECT_TRUE(conn_->RegisterBatch("v", Batch()).IsInvalidArgument());
  EXPECT_TRUE(conn_->RegisterBatch("", Q("SELECT 1")).IsInvalidArgument());
}

TEST_F(ConnectionTest, RegisteredBatchOutlivesCallerCopies) {
  {
    Batch b = Q("SELECT i, repeat('y', 50) AS s FROM range(3000) t(i)");
    ASSERT_TRUE(conn_->RegisterBatch("v", b).ok());
  }  // the only caller copy is gone; the connection keeps the rows
  EXPECT_EQ(Scalar("SELECT max(i) FROM v"), "2999");
  EXPECT_EQ(Scalar("SELECT length(s) FROM v LIMIT 1"), "50");
}

// The view owns a share of the rows: a rolled-back unregister leaves a working view.
TEST_F(ConnectionTest, RolledBackUnregisterKeepsTheRows) {
  {
    Batch b = Q("SELECT i, 'z' || i AS s FROM range(5000) t(i)");
    ASSERT_TRUE(conn_->RegisterBatch("v", b).ok());
  }
  ASSERT_TRUE(conn_->Execute("BEGIN").ok());
  ASSERT_TRUE(conn_->UnregisterBatch("v").ok());
  EXPECT_TRUE(conn_->Query("SELECT * FROM v").status().IsNotFound());
  ASSERT_TRUE(conn_->Execute("ROLLBACK").ok());
  EXPECT_EQ(Scalar("SELECT max(s) FROM v"), "z999");
  EXPECT_EQ(Scalar("SELECT sum(i) FROM v"), std::to_string(4999LL * 5000 / 2));
}

TEST_F(ConnectionTest, BatchRegisteredOnTwoConnections) {
  Batch b = Q("SELECT i FROM range(100) t(i)");
  auto other = engine_->Connect();
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(conn_->RegisterBatch("v", b).ok());
  ASSERT_TRUE((*other)->RegisterBatch("w", b).ok());
  EXPECT_EQ(Scalar("SELECT sum(i) FROM v"), "4950");
  auto r = (*other)->Query("SELECT sum(i) FROM w");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r->GetString(0, 0), "4950");
  // Temporary views are per connection.
  EXPECT_TRUE((*other)->Query("SELECT * FROM v").status().IsNotFound());
}

TEST_F(ConnectionTest, InterruptFromAnotherThread) {
  std::atomic<bool> done{false};
  Result<Batch> result = Status::Internal("not run");
  std::thread worker([&] {
    result = conn_->Query("SELECT count(*) FROM range(100000000000) a(i) WHERE i % 7 = 3");
    done = true;
  });
  auto start = std::chrono::steady_clock::now();
  while (!done && std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    conn_->Interrupt();
  }
  worker.join();
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(result.status().IsCancelled()) << result.status().ToString();
  // The connection is usable afterwards, and a stale Interrupt does not cancel the next query.
  conn_->Interrupt();
  EXPECT_EQ(Scalar("SELECT 1"), "1");
}

TEST(EngineOptionsTest, OptionsAreApplied) {
  testing::TempDir dir;
  EngineOptions options;
  options.threads = 2;
  options.memory_limit = "512MB";
  options.temp_directory = dir.path();
  auto engine = Engine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  auto conn = (*engine)->Connect();
  ASSERT_TRUE(conn.ok());
  auto r = (*conn)->Query(
      "SELECT current_setting('threads'), current_setting('memory_limit'), "
      "current_setting('temp_directory')");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r->GetString(0, 0), "2");
  EXPECT_NE(r->GetString(0, 1)->find("MiB"), std::string::npos) << *r->GetString(0, 1);
  EXPECT_EQ(*r->GetString(0, 2), dir.path());
}

TEST(EngineOptionsTest, BadOptionsAreInvalidArgument) {
  EngineOptions zero;
  zero.threads = 0;
  EXPECT_TRUE(Engine::Open(zero).status().IsInvalidArgument());
  EngineOptions bad_memory;
  bad_memory.memory_limit = "lots";
  auto r = Engine::Open(bad_memory);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  EngineOptions bad_zone;
  bad_zone.time_zone = "Mars/Olympus";
  EXPECT_FALSE(Engine::Open(bad_zone).ok());
}

}  // namespace
}  // namespace sluice::engine
