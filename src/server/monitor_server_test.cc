#include "server/monitor_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "server/prometheus.h"
#include "server/test_util.h"

namespace sluice::server {
namespace {

using testing::MakeProgress;

std::unique_ptr<MonitorServer> StartOnFreePort() {
  MonitorServerOptions o;
  o.address.port = 0;
  Result<std::unique_ptr<MonitorServer>> s = MonitorServer::Start(o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).ValueOrDie() : nullptr;
}

TEST(ParseUiAddressTest, DefaultsToLoopback) {
  Result<UiAddress> empty = ParseUiAddress("");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->host, "127.0.0.1");
  EXPECT_EQ(empty->port, 4040);
  Result<UiAddress> port = ParseUiAddress("8080");
  ASSERT_TRUE(port.ok());
  EXPECT_EQ(port->host, "127.0.0.1");
  EXPECT_EQ(port->port, 8080);
  Result<UiAddress> any = ParseUiAddress("0.0.0.0:9000");
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any->host, "0.0.0.0");
  EXPECT_EQ(any->port, 9000);
  Result<UiAddress> v6 = ParseUiAddress("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  for (const char* bad : {"abc", "70000", ":4040", "host:", "-1", "12x"}) {
    Result<UiAddress> r = ParseUiAddress(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(r.status().IsInvalidArgument());
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().ToString();
  }
}

TEST(MonitorServerTest, ServesTheQueriesProgressMetricsAndPage) {
  std::unique_ptr<MonitorServer> server = StartOnFreePort();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(server->port(), 0);
  EXPECT_EQ(server->url(), "http://127.0.0.1:" + std::to_string(server->port()) + "/");
  auto trigger = stream::Trigger::ProcessingTime(500);
  ASSERT_TRUE(trigger.ok());
  server->QueryStarted("id-1", "run-1", "counts", *trigger);
  for (int64_t b = 0; b < 4; ++b) {
    server->QueryProgress(MakeProgress("id-1", "run-1", b, 10 * (b + 1), 20, 40));
  }
  ASSERT_TRUE(server->Flush());

  httplib::Client client("127.0.0.1", server->port());
  auto queries = client.Get("/api/v1/queries");
  ASSERT_TRUE(queries);
  EXPECT_EQ(queries->status, 200);
  nlohmann::json list = nlohmann::json::parse(queries->body);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["id"], "id-1");
  EXPECT_EQ(list[0]["runId"], "run-1");
  EXPECT_EQ(list[0]["name"], "counts");
  EXPECT_EQ(list[0]["status"], "active");
  EXPECT_EQ(list[0]["trigger"], "ProcessingTime(500 ms)");
  EXPECT_EQ(list[0]["triggerIntervalMs"], 500);
  EXPECT_EQ(list[0]["lastBatchId"], 3);
  EXPECT_EQ(list[0]["lastProgress"]["numInputRows"], 40);
  EXPECT_EQ(list[0]["lastProgress"]["processedRowsPerSecond"], 40.0);
  EXPECT_EQ(list[0]["numInputRowsTotal"], 100);
  EXPECT_EQ(list[0]["fallingBehind"], false);
  EXPECT_TRUE(list[0]["error"].is_null());

  auto progress = client.Get("/api/v1/queries/id-1/progress?limit=2");
  ASSERT_TRUE(progress);
  EXPECT_EQ(progress->status, 200);
  nlohmann::json batches = nlohmann::json::parse(progress->body);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0]["batchId"], 2);
  EXPECT_EQ(batches[1]["batchId"], 3);
  EXPECT_EQ(batches[1]["numInputRows"], 40);
  EXPECT_EQ(batches[1]["sources"][0]["description"], "FileStreamSource[/in]");
  auto all = client.Get("/api/v1/queries/id-1/progress");
  ASSERT_TRUE(all);
  EXPECT_EQ(nlohmann::json::parse(all->body).size(), 4u);
  auto unknown = client.Get("/api/v1/queries/nope/progress");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  auto bad_limit = client.Get("/api/v1/queries/id-1/progress?limit=x");
  ASSERT_TRUE(bad_limit);
  EXPECT_EQ(bad_limit->status, 400);

  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Type"), std::string(kPrometheusContentType));
  EXPECT_NE(metrics->body.find(
                "sluice_query_num_input_rows_total{query_name=\"counts\",query_id=\"id-1\"} 100\n"),
            std::string::npos)
      << metrics->body;

  auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->get_header_value("Content-Type").find("text/html"), std::string::npos);
  EXPECT_NE(page->body.find("/api/v1/queries"), std::string::npos);
  EXPECT_EQ(page->body.find("http://"), std::string::npos) << "the page must not load anything";
  EXPECT_EQ(page->body.find("https://"), std::string::npos) << "the page must not load anything";
}

TEST(MonitorServerTest, HealthzIsUnavailableWhileAQueryHasFailed) {
  std::unique_ptr<MonitorServer> server = StartOnFreePort();
  ASSERT_NE(server, nullptr);
  httplib::Client client("127.0.0.1", server->port());
  auto ok = client.Get("/healthz");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "ok\n");

  server->QueryStarted("id-1", "run-1", "counts", stream::Trigger::Default());
  server->QueryTerminated("id-1", "run-1", "IO error: batch 2: writing /wh/t: disk full");
  ASSERT_TRUE(server->Flush());
  auto failed = client.Get("/healthz");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->status, 503);
  EXPECT_EQ(failed->body,
            "query counts (id-1) failed: IO error: batch 2: writing /wh/t: disk full\n");
  nlohmann::json list = nlohmann::json::parse(client.Get("/api/v1/queries")->body);
  EXPECT_EQ(list[0]["status"], "failed");
  EXPECT_EQ(list[0]["failures"], 1);
  EXPECT_EQ(list[0]["error"]["contexts"].size(), 4u);
  auto metrics = client.Get("/metrics");
  EXPECT_NE(metrics->body.find(
                "sluice_query_failures_total{query_name=\"counts\",query_id=\"id-1\"} 1\n"),
            std::string::npos);

  // A restart is scheduled: healthy, status "restarting"; then started again: healthy.
  server->QueryRestarting("id-1", "run-1");
  auto restarting = client.Get("/healthz");
  ASSERT_TRUE(restarting);
  EXPECT_EQ(restarting->status, 200);
  EXPECT_EQ(nlohmann::json::parse(client.Get("/api/v1/queries")->body)[0]["status"], "restarting");
  server->QueryStarted("id-1", "run-2", "counts", stream::Trigger::Default());
  ASSERT_TRUE(server->Flush());
  auto again = client.Get("/healthz");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
}

TEST(MonitorServerTest, ABusyPortIsAnErrorNamingIt) {
  std::unique_ptr<MonitorServer> first = StartOnFreePort();
  ASSERT_NE(first, nullptr);
  MonitorServerOptions o;
  o.address.port = first->port();
  Result<std::unique_ptr<MonitorServer>> second = MonitorServer::Start(o);
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(second.status().IsIOError());
  EXPECT_NE(second.status().message().find("127.0.0.1:" + std::to_string(first->port())),
            std::string::npos)
      << second.status().ToString();
}

TEST(MonitorServerTest, StopIsIdempotent) {
  std::unique_ptr<MonitorServer> server = StartOnFreePort();
  ASSERT_NE(server, nullptr);
  server->Stop();
  server->Stop();
  httplib::Client client("127.0.0.1", server->port());
  EXPECT_FALSE(client.Get("/healthz"));
}

}  // namespace
}  // namespace sluice::server
