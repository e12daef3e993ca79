#include "server/prometheus.h"

#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "server/test_util.h"

namespace sluice::server {
namespace {

using testing::MakeProgress;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool HasLine(const std::string& text, const std::string& line) {
  for (const std::string& l : Lines(text)) {
    if (l == line) return true;
  }
  return false;
}

QuerySnapshot StatefulQuery() {
  QueryStore store;
  store.SetTrigger("id-1", "ProcessingTime(1000 ms)", 1000);
  store.OnStarted("id-1", "run-1", "counts", 0);
  stream::StreamingQueryProgress p = MakeProgress("id-1", "run-1", 4, 120, 12.34, 56.75, 250);
  p.event_time = {{"max", "2024-01-02T03:04:05.000Z"}, {"watermark", "2024-01-02T03:03:55.500Z"}};
  stream::StateOperatorProgress op;
  op.operator_name = "stateStoreSave";
  op.num_rows_total = 42;
  op.memory_used_bytes = 4096;
  op.num_rows_dropped_by_watermark = 2;
  p.state_operators.push_back(op);
  p.sources[0].metrics = {
      {"numFilesOutstanding", "7"}, {"numBytesOutstanding", "700"}, {"numRescuedRows", "1"}};
  stream::SourceProgress kafka;
  kafka.description = "KafkaV2[Subscribe[orders]]";
  kafka.metrics = {{"maxOffsetsBehindLatest", "15"},
                   {"avgOffsetsBehindLatest", "7.5"},
                   {"minOffsetsBehindLatest", "0"}};
  p.sources.push_back(kafka);
  p.sink.num_output_rows = 7;
  store.OnProgress(p, 1);
  return store.Snapshot(2)[0];
}

TEST(PrometheusTest, SamplesMatchTheLastProgress) {
  std::string text = FormatPrometheus({StatefulQuery()});
  const std::string q = "query_name=\"counts\",query_id=\"id-1\"";
  EXPECT_TRUE(HasLine(text, "sluice_query_input_rows_per_second{" + q + "} 12.3")) << text;
  EXPECT_TRUE(HasLine(text, "sluice_query_processed_rows_per_second{" + q + "} 56.8")) << text;
  EXPECT_TRUE(HasLine(text, "sluice_query_batch_duration_ms{" + q + "} 250"));
  EXPECT_TRUE(
      HasLine(text, "sluice_query_batch_phase_duration_ms{" + q + ",phase=\"addBatch\"} 240"));
  EXPECT_TRUE(HasLine(text, "sluice_query_last_batch_id{" + q + "} 4"));
  EXPECT_TRUE(HasLine(text, "sluice_query_num_input_rows_total{" + q + "} 120"));
  EXPECT_TRUE(HasLine(text, "sluice_query_num_output_rows_total{" + q + "} 7"));
  EXPECT_TRUE(HasLine(text, "sluice_query_status{" + q + ",status=\"active\"} 1"));
  EXPECT_TRUE(HasLine(text, "sluice_query_status{" + q + ",status=\"failed\"} 0"));
  EXPECT_TRUE(HasLine(text, "sluice_query_failures_total{" + q + "} 0"));
  EXPECT_TRUE(HasLine(text, "sluice_query_watermark_lag_seconds{" + q + "} 9.5"));
  EXPECT_TRUE(HasLine(text, "sluice_query_watermark_timestamp_seconds{" + q + "} 1704164635.5"));
  const std::string op = q + ",operator=\"stateStoreSave\",operator_index=\"0\"";
  EXPECT_TRUE(HasLine(text, "sluice_state_rows{" + op + "} 42"));
  EXPECT_TRUE(HasLine(text, "sluice_state_memory_bytes{" + op + "} 4096"));
  EXPECT_TRUE(HasLine(text, "sluice_state_rows_dropped_by_watermark_total{" + op + "} 2"));
  const std::string files = q + ",source_index=\"0\",source=\"FileStreamSource[/in]\"";
  EXPECT_TRUE(HasLine(text, "sluice_source_files_outstanding{" + files + "} 7"));
  EXPECT_TRUE(HasLine(text, "sluice_source_bytes_outstanding{" + files + "} 700"));
  EXPECT_TRUE(HasLine(text, "sluice_source_rescued_rows_total{" + files + "} 1"));
  const std::string kafka = q + ",source_index=\"1\",source=\"KafkaV2[Subscribe[orders]]\"";
  EXPECT_TRUE(
      HasLine(text, "sluice_source_kafka_offsets_behind_latest{" + kafka + ",stat=\"max\"} 15"));
  EXPECT_TRUE(
      HasLine(text, "sluice_source_kafka_offsets_behind_latest{" + kafka + ",stat=\"avg\"} 7.5"));
}

TEST(PrometheusTest, EveryFamilyHasHelpAndTypeOnceBeforeItsSamples) {
  QuerySnapshot a = StatefulQuery();
  QuerySnapshot b = a;
  b.id = "id-2";
  std::string text = FormatPrometheus({a, b});
  const std::regex help(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+)");
  const std::regex type(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge))");
  const std::regex sample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\} (-?[0-9.e+]+|NaN))");
  std::set<std::string> declared;
  std::string current;
  for (const std::string& line : Lines(text)) {
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      EXPECT_TRUE(declared.insert(m[1]).second) << "family declared twice: " << m[1];
      current = m[1];
    } else if (std::regex_match(line, m, type)) {
      EXPECT_EQ(m[1], current) << line;
    } else if (std::regex_match(line, m, sample)) {
      EXPECT_EQ(m[1], current) << "sample outside its family: " << line;
    } else {
      ADD_FAILURE() << "not exposition format: '" << line << "'";
    }
  }
  EXPECT_GE(declared.size(), 15u);
}

TEST(PrometheusTest, NoSampleForUnknownValues) {
  QueryStore store;
  store.OnStarted("id", "run", std::nullopt, 0);
  stream::StreamingQueryProgress p = MakeProgress("id", "run", 0, 5, std::nan(""), 10);
  p.name.reset();
  store.OnProgress(p, 1);
  std::string text = FormatPrometheus(store.Snapshot(1));
  EXPECT_EQ(text.find("sluice_query_input_rows_per_second{"), std::string::npos) << text;
  EXPECT_EQ(text.find("NaN"), std::string::npos);
  EXPECT_EQ(text.find("sluice_query_watermark_lag_seconds{"), std::string::npos);
  // An unnamed query has an empty query_name.
  EXPECT_TRUE(
      HasLine(text, "sluice_query_processed_rows_per_second{query_name=\"\",query_id=\"id\"} 10"))
      << text;
}

TEST(PrometheusTest, LagUsesTheNewestEventTimeAcrossNoDataBatches) {
  QueryStore store;
  store.OnStarted("id", "run", "q", 0);
  stream::StreamingQueryProgress data = MakeProgress("id", "run", 0, 5, 1, 1);
  data.event_time = {{"max", "2024-01-02T03:04:05.000Z"},
                     {"watermark", "2024-01-02T03:03:00.000Z"}};
  store.OnProgress(data, 1);
  stream::StreamingQueryProgress no_data = MakeProgress("id", "run", 1, 0, 0, 0);
  no_data.event_time = {{"watermark", "2024-01-02T03:04:04.000Z"}};
  store.OnProgress(no_data, 2);
  std::string text = FormatPrometheus(store.Snapshot(3));
  EXPECT_TRUE(
      HasLine(text, "sluice_query_watermark_lag_seconds{query_name=\"q\",query_id=\"id\"} 1"))
      << text;
}

TEST(PrometheusTest, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  QueryStore store;
  store.OnStarted("id", "run", "we\"ird\\name", 0);
  std::string text = FormatPrometheus(store.Snapshot(0));
  EXPECT_NE(text.find("query_name=\"we\\\"ird\\\\name\""), std::string::npos) << text;
}

}  // namespace
}  // namespace sluice::server
