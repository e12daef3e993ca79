#include "stream/progress.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "stream/time_format.h"

namespace sluice::stream {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

StreamingQueryProgress Full() {
  StreamingQueryProgress p;
  p.id = "9f3c2b1a-0e4d-4c5b-8a6f-7e8d9c0b1a2f";
  p.run_id = "0b0c0d0e-1a2b-4c3d-8e4f-5a6b7c8d9e0f";
  p.timestamp = FormatUtcTimestampMs(1700000000123);
  p.batch_id = 3;
  p.batch_duration = 1234;
  p.duration_ms = {{"triggerExecution", 1234}, {"addBatch", 900},     {"walCommit", 12},
                   {"latestOffset", 5},        {"queryPlanning", 40}, {"getBatch", 1},
                   {"commitOffsets", 10}};
  p.event_time = {{"watermark", "2023-11-14T22:13:00.000Z"},
                  {"min", "2023-11-14T22:13:12.000Z"},
                  {"max", "2023-11-14T22:13:19.000Z"},
                  {"avg", "2023-11-14T22:13:15.500Z"}};
  StateOperatorProgress op;
  op.operator_name = std::string(kOpStateStoreSave);
  op.num_rows_total = 7;
  op.num_rows_updated = 3;
  op.all_updates_time_ms = 11;
  op.num_rows_removed = 1;
  op.all_removals_time_ms = 2;
  op.commit_time_ms = 30;
  op.memory_used_bytes = 4096;
  op.num_rows_dropped_by_watermark = 2;
  op.num_shuffle_partitions = 200;
  op.num_state_store_instances = 200;
  op.custom_metrics = {{"stateOnCurrentVersionSizeBytes", 1024},
                       {"loadedMapCacheMissCount", 0},
                       {"loadedMapCacheHitCount", 4}};
  p.state_operators.push_back(op);
  SourceProgress s;
  s.description = "DeltaSource[file:/t]";
  s.start_offset = R"({"sourceVersion":1,"reservoirVersion":3})";
  s.end_offset = R"({"sourceVersion":1,"reservoirVersion":4})";
  s.num_input_rows = 10;
  s.input_rows_per_second = 2.25;
  s.processed_rows_per_second = 10.0 / 1.2;
  p.sources.push_back(s);
  p.sink.description = "DeltaSink[/out]";
  p.observed_metrics["m"] = nlohmann::ordered_json::parse(R"({"rows":10,"avg":1.5})");
  return p;
}

constexpr std::string_view kFullJson =
    R"({"id":"9f3c2b1a-0e4d-4c5b-8a6f-7e8d9c0b1a2f","runId":"0b0c0d0e-1a2b-4c3d-8e4f-5a6b7c8d9e0f",)"
    R"("name":null,"timestamp":"2023-11-14T22:13:20.123Z","batchId":3,"batchDuration":1234,)"
    R"("numInputRows":10,"inputRowsPerSecond":2.3,"processedRowsPerSecond":8.3,)"
    R"("durationMs":{"addBatch":900,"commitOffsets":10,"getBatch":1,"latestOffset":5,)"
    R"("queryPlanning":40,"triggerExecution":1234,"walCommit":12},)"
    R"("eventTime":{"avg":"2023-11-14T22:13:15.500Z","max":"2023-11-14T22:13:19.000Z",)"
    R"("min":"2023-11-14T22:13:12.000Z","watermark":"2023-11-14T22:13:00.000Z"},)"
    R"("stateOperators":[{"operatorName":"stateStoreSave","numRowsTotal":7,"numRowsUpdated":3,)"
    R"("allUpdatesTimeMs":11,"numRowsRemoved":1,"allRemovalsTimeMs":2,"commitTimeMs":30,)"
    R"("memoryUsedBytes":4096,"numRowsDroppedByWatermark":2,"numShufflePartitions":200,)"
    R"("numStateStoreInstances":200,"customMetrics":{"loadedMapCacheHitCount":4,)"
    R"("loadedMapCacheMissCount":0,"stateOnCurrentVersionSizeBytes":1024}}],)"
    R"("sources":[{"description":"DeltaSource[file:/t]",)"
    R"("startOffset":{"sourceVersion":1,"reservoirVersion":3},)"
    R"("endOffset":{"sourceVersion":1,"reservoirVersion":4},"latestOffset":null,)"
    R"("numInputRows":10,"inputRowsPerSecond":2.3,"processedRowsPerSecond":8.3}],)"
    R"("sink":{"description":"DeltaSink[/out]","numOutputRows":-1},)"
    R"("observedMetrics":{"m":{"rows":10,"avg":1.5}}})";

TEST(ProgressTest, FullGoldenJson) { EXPECT_EQ(ProgressToJson(Full()), kFullJson); }

TEST(ProgressTest, OmittedFieldsGolden) {
  StreamingQueryProgress p;
  p.id = "i";
  p.run_id = "r";
  p.name = "events";
  p.timestamp = FormatUtcTimestampMs(0);
  p.batch_id = 0;
  SourceProgress a;
  a.description = "RateSource";
  a.start_offset = std::nullopt;
  a.end_offset = "5";
  a.latest_offset = "not json {";
  a.input_rows_per_second = kNaN;
  a.processed_rows_per_second = kInf;
  a.metrics = {{"b", "2"}, {"a", "1"}};
  p.sources.push_back(a);
  p.sink.description = "MemorySink";
  p.sink.num_output_rows = 0;
  p.sink.metrics = {{"numFiles", "1"}};
  EXPECT_EQ(ProgressToJson(p),
            R"({"id":"i","runId":"r","name":"events","timestamp":"1970-01-01T00:00:00.000Z",)"
            R"("batchId":0,"batchDuration":0,"numInputRows":0,"stateOperators":[],)"
            R"("sources":[{"description":"RateSource","startOffset":null,"endOffset":5,)"
            R"("latestOffset":"not json {","numInputRows":0,"metrics":{"a":"1","b":"2"}}],)"
            R"("sink":{"description":"MemorySink","numOutputRows":0,"metrics":{"numFiles":"1"}}})");
}

TEST(ProgressTest, NoSourcesHasZeroRates) {
  StreamingQueryProgress p;
  const std::string json = ProgressToJson(p);
  EXPECT_NE(json.find(R"("numInputRows":0,"inputRowsPerSecond":0.0,"processedRowsPerSecond":0.0,)"
                      R"("stateOperators":[],"sources":[])"),
            std::string::npos)
      << json;
}

TEST(ProgressTest, RoundHalfUpOneDecimal) {
  struct Case {
    double in;
    double out;
  };
  for (Case c : std::vector<Case>{{0.05, 0.1},
                                  {0.25, 0.3},
                                  {1.45, 1.5},  // the decimal 1.45, not its binary value
                                  {2.675, 2.7},
                                  {1.04, 1.0},
                                  {9.95, 10.0},
                                  {99.96, 100.0},
                                  {-0.25, -0.3},
                                  {1.0 / 3, 0.3},
                                  {123456.789, 123456.8},
                                  {5, 5.0},
                                  {1e-7, 0.0},
                                  {0.0, 0.0}}) {
    EXPECT_EQ(RoundHalfUpOneDecimal(c.in), c.out) << c.in;
  }
  const double neg_small = RoundHalfUpOneDecimal(-0.04);
  EXPECT_EQ(neg_small, 0.0);
  EXPECT_FALSE(std::signbit(neg_small));  // never -0.0
  EXPECT_TRUE(std::isnan(RoundHalfUpOneDecimal(kNaN)));
  EXPECT_EQ(RoundHalfUpOneDecimal(kInf), kInf);
}

TEST(ProgressTest, RatesPrintWithOneDecimal) {
  StreamingQueryProgress p;
  SourceProgress s;
  s.input_rows_per_second = 9.96;
  s.processed_rows_per_second = 1234567.25;
  p.sources.push_back(s);
  const std::string json = ProgressToJson(p);
  EXPECT_NE(json.find(R"("inputRowsPerSecond":10.0,"processedRowsPerSecond":1234567.3)"),
            std::string::npos)
      << json;
}

TEST(ProgressTest, TopLevelAggregatesSumTheSources) {
  StreamingQueryProgress p;
  SourceProgress a, b;
  a.num_input_rows = 3;
  a.input_rows_per_second = 1.5;
  a.processed_rows_per_second = 2;
  b.num_input_rows = 4;
  b.input_rows_per_second = 0.5;
  b.processed_rows_per_second = kNaN;
  p.sources = {a, b};
  EXPECT_EQ(p.NumInputRows(), 7);
  EXPECT_EQ(p.InputRowsPerSecond(), 2.0);
  EXPECT_TRUE(std::isnan(p.ProcessedRowsPerSecond()));
  const std::string json = ProgressToJson(p);
  EXPECT_NE(json.find(R"("numInputRows":7,"inputRowsPerSecond":2.0,"stateOperators")"),
            std::string::npos)
      << json;  // NaN sum omitted
}

TEST(ProgressTest, ParseRoundTrip) {
  StreamingQueryProgress p = Full();
  // Rates already at one decimal survive exactly.
  p.sources[0].input_rows_per_second = 2.3;
  p.sources[0].processed_rows_per_second = 8.3;
  p.name = "q1";
  auto parsed = ParseProgressJson(ProgressToJson(p));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, p);
  EXPECT_EQ(ProgressToJson(*parsed), ProgressToJson(p));

  auto golden = ParseProgressJson(kFullJson);
  ASSERT_TRUE(golden.ok()) << golden.status().ToString();
  EXPECT_EQ(ProgressToJson(*golden), kFullJson);
  EXPECT_FALSE(golden->name.has_value());
  EXPECT_FALSE(golden->sources[0].latest_offset.has_value());
}

TEST(ProgressTest, ParseOmittedAndStringOffsets) {
  StreamingQueryProgress p;
  p.id = "i";
  p.run_id = "r";
  p.timestamp = "1970-01-01T00:00:00.000Z";
  SourceProgress s;
  s.description = "d";
  s.start_offset = "not json {";
  s.end_offset = R"("5")";  // a JSON string offset whose content is JSON stays a JSON string
  s.input_rows_per_second = kNaN;
  s.processed_rows_per_second = kNaN;
  p.sources.push_back(s);
  auto parsed = ParseProgressJson(ProgressToJson(p));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->sources[0].start_offset, "not json {");
  EXPECT_EQ(parsed->sources[0].end_offset, R"("5")");
  EXPECT_TRUE(std::isnan(parsed->sources[0].input_rows_per_second));
  EXPECT_TRUE(parsed->duration_ms.empty());
  EXPECT_TRUE(parsed->observed_metrics.empty());
  EXPECT_EQ(*parsed, p);

  // Ambiguous by construction (as in Spark): a JSON string offset whose content is not JSON
  // prints like non-JSON offset text, and reads back as that text.
  p.sources[0].end_offset = R"("abc")";
  auto ambiguous = ParseProgressJson(ProgressToJson(p));
  ASSERT_TRUE(ambiguous.ok());
  EXPECT_EQ(ambiguous->sources[0].end_offset, "abc");
}

TEST(ProgressTest, ParseErrorsNameTheField) {
  struct Case {
    std::string json;
    std::string_view expect;
  };
  for (const Case& c : std::vector<Case>{
           {"", "not valid JSON"},
           {"[]", "not a JSON object"},
           {R"({"runId":"r"})", "\"id\""},
           {R"({"id":"i","runId":"r","name":5,"timestamp":"t","batchId":0,"sink":{}})", "name"},
           {R"({"id":"i","runId":"r","timestamp":"t","batchId":"0","sink":{}})", "batchId"},
           {R"({"id":"i","runId":"r","timestamp":"t","batchId":0})", "sink"},
           {R"({"id":"i","runId":"r","timestamp":"t","batchId":0,"sink":{"description":"d"},)"
            R"("sources":[{"description":"s","numInputRows":"x"}]})",
            "sources[0]"},
           {R"({"id":"i","runId":"r","timestamp":"t","batchId":0,"sink":{"description":"d"},)"
            R"("durationMs":{"a":"x"}})",
            "durationMs"},
       }) {
    auto parsed = ParseProgressJson(c.json);
    ASSERT_FALSE(parsed.ok()) << c.json;
    EXPECT_TRUE(parsed.status().IsCorruption()) << parsed.status().ToString();
    EXPECT_NE(parsed.status().message().find(c.expect), std::string::npos)
        << c.json << " -> " << parsed.status().ToString();
  }
}

TEST(TimeFormatTest, FormatsUtcMilliseconds) {
  EXPECT_EQ(FormatUtcTimestampMs(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatUtcTimestampMs(1700000000123), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(FormatUtcTimestampMs(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatUtcTimestampMs(1709164800000), "2024-02-29T00:00:00.000Z");
  EXPECT_EQ(FormatUtcTimestampMs(253402300799999), "9999-12-31T23:59:59.999Z");
}

TEST(TimeFormatTest, ParsesItsOwnFormat) {
  for (int64_t ms : {int64_t{0}, int64_t{1700000000123}, int64_t{-1}, int64_t{1709164800000},
                     int64_t{951782400000} /* 2000-02-29 */}) {
    auto parsed = ParseUtcTimestampMs(FormatUtcTimestampMs(ms));
    ASSERT_TRUE(parsed.ok()) << ms;
    EXPECT_EQ(*parsed, ms);
  }
  for (std::string_view bad :
       {"", "2023-11-14T22:13:20Z", "2023-11-14 22:13:20.123Z", "2023-13-14T22:13:20.123Z",
        "2023-02-29T00:00:00.000Z", "1900-02-29T00:00:00.000Z", "2023-11-14T24:00:00.000Z",
        "2023-11-14T22:13:20.123+"}) {
    auto parsed = ParseUtcTimestampMs(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_TRUE(parsed.status().IsInvalidArgument());
  }
}

}  // namespace
}  // namespace sluice::stream

namespace sluice::stream {
namespace {

TEST(ProgressTest, TornJsonNeverCrashes) {
  const std::string full(kFullJson);
  for (size_t len = 0; len < full.size(); ++len) {
    auto parsed = ParseProgressJson(full.substr(0, len));
    ASSERT_FALSE(parsed.ok()) << len;  // every proper prefix of an object is invalid JSON
    ASSERT_TRUE(parsed.status().IsCorruption());
  }
}

}  // namespace
}  // namespace sluice::stream
