// The Kafka source against librdkafka's mock cluster, started by each test on loopback, or the
// real broker of SLUICE_KAFKA_BOOTSTRAP (test/interop/kafka): KafkaTestCluster, test_cluster.h.
#include "sources/kafka/kafka_source.h"

#include <array>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fs/local_file_system.h"
#include "fs/test_util.h"
#include "sources/kafka/test_cluster.h"
#include "sources/source_factory.h"

namespace sluice::sources::kafka {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class KafkaSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = engine::Engine::Open();
    ASSERT_TRUE(e.ok());
    engine_ = std::move(*e);
  }

  SourceContext Context(std::map<std::string, std::string> options,
                        const std::string& checkpoint_subdir = "src") {
    SourceContext ctx;
    ctx.fs = fs::LocalFileSystem();
    ctx.engine = engine_.get();
    ctx.checkpoint_dir = dir_.Join(checkpoint_subdir);
    options["kafka.bootstrap.servers"] = cluster_.bootstrap();
    options["kafkaConsumer.pollTimeoutMs"] = "20000";
    ctx.options = std::move(options);
    return ctx;
  }

  std::unique_ptr<Source> Make(std::map<std::string, std::string> options,
                               const std::string& checkpoint_subdir = "src") {
    auto s = CreateSource("kafka", Context(std::move(options), checkpoint_subdir));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  // "partition:offset:key:value" per row, in the batch's order.
  static std::vector<std::string> Rows(const engine::Batch& b) {
    std::vector<std::string> out;
    for (int64_t r = 0; r < b.num_rows(); ++r) {
      auto key = b.GetString(r, 0);
      auto value = b.GetString(r, 1);
      out.push_back(std::to_string(b.GetInt64(r, 3)->value_or(-1)) + ":" +
                    std::to_string(b.GetInt64(r, 4)->value_or(-1)) + ":" + key.value_or("NULL") +
                    ":" + value.value_or("NULL"));
    }
    return out;
  }

  fs::ScopedTempDir dir_{"sluice-kafka"};
  testing::KafkaTestCluster cluster_;
  std::unique_ptr<engine::Engine> engine_;
};

TEST_F(KafkaSourceTest, ReadsExactlyTheRecordedRangesAndRereadsThemIdentically) {
  cluster_.CreateTopic("orders", 3);
  for (int i = 0; i < 30; ++i) {
    cluster_.Produce(
        "orders", i % 3,
        i % 5 == 0 ? std::nullopt : std::optional<std::string>("k" + std::to_string(i)),
        "v" + std::to_string(i));
  }
  cluster_.Flush();
  auto src = Make({{"subscribe", "orders"}, {"startingOffsets", "earliest"}});
  ASSERT_TRUE(src);
  EXPECT_EQ(src->Description(), "KafkaV2[Subscribe[orders]]");
  EXPECT_EQ(src->schema().size(), 7u);
  auto end = src->LatestOffset(std::nullopt, ReadLimit{});
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  ASSERT_TRUE(*end);
  EXPECT_EQ(**end, R"({"orders":{"0":10,"1":10,"2":10}})");
  auto batch = src->GetBatch(std::nullopt, **end);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  auto rows = Rows(*batch);
  ASSERT_EQ(rows.size(), 30u);
  EXPECT_EQ(rows[0], "0:0:NULL:v0");  // partition order, then offset order
  EXPECT_EQ(rows[1], "0:1:k3:v3");
  EXPECT_EQ(rows[10], "1:0:k1:v1");
  // More data arrives; the next batch is (end, new end]. A fresh source (another process after a
  // crash) re-reading the same ranges gets the same rows, whatever it prefetches.
  for (int i = 30; i < 36; ++i) cluster_.Produce("orders", i % 3, "k", "v" + std::to_string(i));
  cluster_.Flush();
  auto end2 = src->LatestOffset(**end, ReadLimit{});
  ASSERT_TRUE(end2.ok());
  EXPECT_EQ(**end2, R"({"orders":{"0":12,"1":12,"2":12}})");
  auto again = Make({{"subscribe", "orders"}, {"startingOffsets", "earliest"}});
  auto b1 = src->GetBatch(**end, **end2);
  auto b2 = again->GetBatch(**end, **end2);
  ASSERT_TRUE(b1.ok() && b2.ok());
  EXPECT_EQ(Rows(*b1), Rows(*b2));
  EXPECT_EQ(Rows(*b1).size(), 6u);
  auto first_again = again->GetBatch(std::nullopt, **end);
  ASSERT_TRUE(first_again.ok());
  EXPECT_EQ(Rows(*first_again), rows);
  // Metrics: nothing behind after reading to the high watermarks.
  auto m = src->Metrics(**end2);
  EXPECT_EQ(m["maxOffsetsBehindLatest"], "0");
}

TEST_F(KafkaSourceTest, ConsecutiveBatchesContinueTheConsumerAndStayExact) {
  // The consumer keeps its assignment across batches that continue where the last stopped, so
  // it reads past a batch's end ahead of time (the mock cluster serves the whole topic at once).
  // Every batch must still hold exactly its ranges: also when a partition sits out a batch, when
  // an earlier batch is re-run on the same source (a seek back), and when the next one continues.
  cluster_.CreateTopic("orders", 3);
  for (int i = 0; i < 300; ++i) cluster_.Produce("orders", i % 3, "k", "v" + std::to_string(i));
  cluster_.Flush();
  // A seek waits for the fetch in flight, which the mock holds for fetch.wait.max.ms at the end.
  auto src = Make({{"subscribe", "orders"},
                   {"startingOffsets", "earliest"},
                   {"kafka.fetch.wait.max.ms", "10"}});
  ASSERT_TRUE(src);
  auto offsets = [](int64_t p0, int64_t p1, int64_t p2) {
    return "{\"orders\":{\"0\":" + std::to_string(p0) + ",\"1\":" + std::to_string(p1) +
           ",\"2\":" + std::to_string(p2) + "}}";
  };
  auto expected = [](std::array<int64_t, 3> from, std::array<int64_t, 3> to) {
    std::vector<std::string> out;
    for (int p = 0; p < 3; ++p) {
      for (int64_t o = from[p]; o < to[p]; ++o) {
        out.push_back(std::to_string(p) + ":" + std::to_string(o) + ":k:v" +
                      std::to_string(o * 3 + p));
      }
    }
    return out;
  };
  // Partition 2 sits out batches 1 and 3; partition 1 ends batch 2 where it started.
  std::vector<std::array<int64_t, 3>> ends = {{0, 0, 0},   {7, 5, 0},    {20, 5, 9},
                                              {21, 40, 9}, {60, 41, 50}, {100, 100, 100}};
  for (size_t i = 1; i < ends.size(); ++i) {
    const auto& a = ends[i - 1];
    const auto& b = ends[i];
    auto batch = src->GetBatch(offsets(a[0], a[1], a[2]), offsets(b[0], b[1], b[2]));
    ASSERT_TRUE(batch.ok()) << "batch " << i << ": " << batch.status().ToString();
    EXPECT_EQ(Rows(*batch), expected(a, b)) << "batch " << i;
    if (i == 3) {
      // Re-run batch 2 (a seek back), then batch 3 continues from there again.
      auto rerun = src->GetBatch(offsets(ends[1][0], ends[1][1], ends[1][2]),
                                 offsets(ends[2][0], ends[2][1], ends[2][2]));
      ASSERT_TRUE(rerun.ok()) << rerun.status().ToString();
      EXPECT_EQ(Rows(*rerun), expected(ends[1], ends[2]));
      auto again = src->GetBatch(offsets(a[0], a[1], a[2]), offsets(b[0], b[1], b[2]));
      ASSERT_TRUE(again.ok()) << again.status().ToString();
      EXPECT_EQ(Rows(*again), expected(a, b));
    }
  }
}

TEST_F(KafkaSourceTest, MinOffsetsPerTriggerDelaysUntilEnoughDataOrMaxTriggerDelay) {
  cluster_.CreateTopic("t", 2);
  for (int i = 0; i < 4; ++i) cluster_.Produce("t", i % 2, "k", "v");
  cluster_.Flush();
  ManualClock clock(1'000'000);
  SourceContext ctx = Context({{"subscribe", "t"},
                               {"startingOffsets", "earliest"},
                               {"minOffsetsPerTrigger", "10"},
                               {"maxTriggerDelay", "1m"}});
  ctx.clock = &clock;
  auto src = CreateSource("kafka", ctx);
  ASSERT_TRUE(src.ok()) << src.status().ToString();
  // The first call starts the delay clock; 4 < 10 new offsets: the batch waits at its start.
  auto first = (*src)->LatestOffset(std::nullopt, ReadLimit{});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(**first, R"({"t":{"0":0,"1":0}})");
  auto start = **first;
  clock.Advance(59'000);
  EXPECT_EQ(**(*src)->LatestOffset(start, ReadLimit{}), start);
  // Enough data arrives: the batch runs at once and restarts the delay.
  for (int i = 0; i < 8; ++i) cluster_.Produce("t", i % 2, "k", "v");
  cluster_.Flush();
  auto end = (*src)->LatestOffset(start, ReadLimit{});
  EXPECT_EQ(**end, R"({"t":{"0":6,"1":6}})");
  // A little more data: below the minimum, it waits until maxTriggerDelay has passed.
  for (int i = 0; i < 3; ++i) cluster_.Produce("t", 0, "k", "v");
  cluster_.Flush();
  clock.Advance(30'000);
  EXPECT_EQ(**(*src)->LatestOffset(**end, ReadLimit{}), **end);
  clock.Advance(30'000);
  EXPECT_EQ(**(*src)->LatestOffset(**end, ReadLimit{}), R"({"t":{"0":9,"1":6}})");
  // Trigger.AvailableNow's all_available ignores the minimum.
  for (int i = 0; i < 2; ++i) cluster_.Produce("t", 1, "k", "v");
  cluster_.Flush();
  ReadLimit all;
  all.all_available = true;
  EXPECT_EQ(**(*src)->LatestOffset(R"({"t":{"0":9,"1":6}})", all), R"({"t":{"0":9,"1":8}})");
}

TEST_F(KafkaSourceTest, MinOffsetsPerTriggerOptionErrors) {
  auto bad = CreateSource("kafka", Context({{"subscribe", "t"}, {"maxTriggerDelay", "soon"}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("'maxTriggerDelay' must be a duration"));
  auto order = CreateSource(
      "kafka",
      Context({{"subscribe", "t"}, {"minOffsetsPerTrigger", "10"}, {"maxOffsetsPerTrigger", "5"}}));
  ASSERT_FALSE(order.ok());
  EXPECT_THAT(order.status().message(),
              HasSubstr("must not be greater than 'maxOffsetsPerTrigger'"));
}

TEST_F(KafkaSourceTest, BatchReadFromStartingToEndingOffsets) {
  cluster_.CreateTopic("b", 2);
  for (int i = 0; i < 10; ++i) cluster_.Produce("b", i % 2, "k", "v" + std::to_string(i));
  cluster_.Flush();
  SourceContext ctx = Context({{"subscribe", "b"}});
  auto all = KafkaSource::ReadBatch(ctx);  // earliest .. latest
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(Rows(*all).size(), 10u);
  EXPECT_EQ(Rows(*all)[0], "0:0:k:v0");
  ctx.options["startingOffsets"] = R"({"b":{"0":1,"1":-2}})";
  ctx.options["endingOffsets"] = R"({"b":{"0":3,"1":-1}})";
  auto part = KafkaSource::ReadBatch(ctx);
  ASSERT_TRUE(part.ok()) << part.status().ToString();
  EXPECT_EQ(Rows(*part), (std::vector<std::string>{"0:1:k:v2", "0:2:k:v4", "1:0:k:v1", "1:1:k:v3",
                                                   "1:2:k:v5", "1:3:k:v7", "1:4:k:v9"}));
  auto expect_error = [&](std::map<std::string, std::string> extra, const std::string& what) {
    SourceContext c = Context({{"subscribe", "b"}});
    for (auto& [k, v] : extra) c.options[k] = v;
    auto r = KafkaSource::ReadBatch(c);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_THAT(r.status().message(), HasSubstr(what));
  };
  expect_error({{"startingOffsets", "latest"}}, "startingOffsets can't be latest");
  expect_error({{"endingOffsets", "earliest"}}, "endingOffsets can't be earliest");
  expect_error({{"maxOffsetsPerTrigger", "5"}}, "applies to streaming reads only");
  expect_error({{"endingOffsets", R"({"b":{"0":3}})"}}, "does not name partition b-1");
  expect_error({{"endingOffsets", R"({"b":{"0":99,"1":-1}})"}}, "past the partition's latest");
}

TEST_F(KafkaSourceTest, MaxOffsetsPerTriggerSplitsAcrossPartitions) {
  cluster_.CreateTopic("t", 2);
  for (int i = 0; i < 40; ++i) cluster_.Produce("t", i < 10 ? 0 : 1, "k", "v");
  cluster_.Flush();
  auto src =
      Make({{"subscribe", "t"}, {"startingOffsets", "earliest"}, {"maxOffsetsPerTrigger", "8"}});
  ASSERT_TRUE(src);
  auto end = src->LatestOffset(std::nullopt, ReadLimit{});
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  // Backlogs 10 and 30: shares 2 and 6.
  EXPECT_EQ(**end, R"({"t":{"0":2,"1":6}})");
  auto b = src->GetBatch(std::nullopt, **end);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->num_rows(), 8);
  // The loop's own limit (Trigger.AvailableNow ignores it with all_available).
  ReadLimit all;
  all.all_available = true;
  auto end_all = src->LatestOffset(**end, all);
  EXPECT_EQ(**end_all, R"({"t":{"0":10,"1":30}})");
  auto m = src->Metrics(**end);
  EXPECT_EQ(m["maxOffsetsBehindLatest"], "24");
  EXPECT_EQ(m["minOffsetsBehindLatest"], "8");
  EXPECT_EQ(m["avgOffsetsBehindLatest"], "16.0");
  // 32 offsets behind, 2 bytes (key "k" + value "v") per record in the last batch.
  EXPECT_EQ(m["estimatedTotalBytesBehindLatest"], "64");
}

TEST_F(KafkaSourceTest, LatestStartIsPersistedSoARestartStartsAtTheSameOffsets) {
  cluster_.CreateTopic("t", 1);
  for (int i = 0; i < 5; ++i) cluster_.Produce("t", 0, "old", "old");
  cluster_.Flush();
  auto src = Make({{"subscribe", "t"}});  // startingOffsets latest (default)
  auto end = src->LatestOffset(std::nullopt, ReadLimit{});
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(**end, R"({"t":{"0":5}})");
  auto initial = fs::LocalFileSystem()->ReadFile(dir_.Join("src/0"));
  ASSERT_TRUE(initial.ok());
  EXPECT_EQ(*initial, "v1\n{\"t\":{\"0\":5}}");
  for (int i = 0; i < 3; ++i) cluster_.Produce("t", 0, "new", "new");
  cluster_.Flush();
  // A restarted source with the same checkpoint re-runs batch 0 from the persisted start.
  auto restarted = Make({{"subscribe", "t"}});
  auto b0 = restarted->GetBatch(std::nullopt, **end);
  ASSERT_TRUE(b0.ok());
  EXPECT_EQ(b0->num_rows(), 0);
  auto end1 = restarted->LatestOffset(**end, ReadLimit{});
  auto b1 = restarted->GetBatch(**end, **end1);
  ASSERT_TRUE(b1.ok());
  EXPECT_EQ(Rows(*b1), (std::vector<std::string>{"0:5:new:new", "0:6:new:new", "0:7:new:new"}));
}

TEST_F(KafkaSourceTest, PatternPicksUpNewTopicsFromTheirStart) {
  cluster_.CreateTopic("events-a", 1);
  cluster_.Produce("events-a", 0, "k", "a0");
  cluster_.Produce("other", 0, "k", "x");
  cluster_.Flush();
  auto src = Make({{"subscribePattern", "events-.*"}, {"startingOffsets", "earliest"}});
  auto end = src->LatestOffset(std::nullopt, ReadLimit{});
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(**end, R"({"events-a":{"0":1}})");
  EXPECT_EQ(src->Description(), "KafkaV2[SubscribePattern[events-.*]]");
  cluster_.CreateTopic("events-b", 1);
  cluster_.Produce("events-b", 0, "k", "b0");
  cluster_.Produce("events-b", 0, "k", "b1");
  cluster_.Flush();
  auto end2 = src->LatestOffset(**end, ReadLimit{});
  ASSERT_TRUE(end2.ok());
  EXPECT_EQ(**end2, R"({"events-a":{"0":1},"events-b":{"0":2}})");
  auto b = src->GetBatch(**end, **end2);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(Rows(*b), (std::vector<std::string>{"0:0:k:b0", "0:1:k:b1"}));
}

TEST_F(KafkaSourceTest, AssignAndStartingOffsetsJson) {
  cluster_.CreateTopic("t", 3);
  for (int p = 0; p < 3; ++p) {
    for (int i = 0; i < 4; ++i)
      cluster_.Produce("t", p, "k", std::to_string(p) + "-" + std::to_string(i));
  }
  cluster_.Flush();
  auto src = Make({{"assign", R"({"t":[0,2]})"}, {"startingOffsets", R"({"t":{"0":3,"2":-2}})"}});
  auto end = src->LatestOffset(std::nullopt, ReadLimit{});
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  auto b = src->GetBatch(std::nullopt, **end);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(Rows(*b), (std::vector<std::string>{"0:3:k:0-3", "2:0:k:2-0", "2:1:k:2-1", "2:2:k:2-2",
                                                "2:3:k:2-3"}));
  // startingOffsets must name every assigned partition.
  auto missing = CreateSource(
      "kafka",
      Context({{"assign", R"({"t":[0,1]})"}, {"startingOffsets", R"({"t":{"0":0}})"}}, "other"));
  ASSERT_TRUE(missing.ok());
  auto r = (*missing)->LatestOffset(std::nullopt, ReadLimit{});
  EXPECT_THAT(r.status().message(), HasSubstr("does not name partition t-1"));
}

TEST_F(KafkaSourceTest, DataLossFailsUnlessFailOnDataLossIsFalse) {
  cluster_.CreateTopic("t", 1);
  cluster_.Produce("t", 0, "k", "v");
  cluster_.Flush();
  // The checkpoint says a partition t-5 was read; it does not exist any more. As Spark's
  // latestOffset, planning the next batch fails (after asking twice more), before any batch
  // is planned without it.
  std::string start = R"({"t":{"0":0,"5":3}})";
  auto src = Make({{"subscribe", "t"}});
  auto refused = src->LatestOffset(start, ReadLimit{});
  EXPECT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("partition t-5 is gone"));
  EXPECT_THAT(refused.status().message(), HasSubstr("failOnDataLoss"));
  // A batch planned without it (an offset log written before this check) fails when read too.
  auto lenient = Make({{"subscribe", "t"}, {"failOnDataLoss", "false"}}, "lenient");
  auto end = lenient->LatestOffset(start, ReadLimit{});
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(end->value().find("\"5\""), std::string::npos) << end->value();
  auto failed = src->GetBatch(start, **end);
  EXPECT_FALSE(failed.ok());
  EXPECT_THAT(failed.status().message(), HasSubstr("partition t-5 is gone"));
  auto ok = lenient->GetBatch(start, **end);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->num_rows(), 1);
}

TEST_F(KafkaSourceTest, OptionErrorsNameTheOptionAndNeverShowSecrets) {
  auto err = [&](std::map<std::string, std::string> o) {
    auto s = CreateSource("kafka", Context(std::move(o)));
    return s.ok() ? std::string("ok") : s.status().message();
  };
  EXPECT_THAT(err({}), HasSubstr("exactly one of the options 'subscribe', 'subscribePattern'"));
  EXPECT_THAT(err({{"subscribe", "a"}, {"assign", R"({"a":[0]})"}}), HasSubstr("exactly one"));
  EXPECT_THAT(err({{"subscribePattern", "("}}), HasSubstr("not a valid regular expression"));
  EXPECT_THAT(err({{"subscribe", "a"}, {"maxOffsetsPerTrigger", "0"}}),
              HasSubstr("maxOffsetsPerTrigger"));
  EXPECT_THAT(err({{"subscribe", "a"}, {"colour", "red"}}), HasSubstr("unknown option 'colour'"));
  EXPECT_THAT(err({{"subscribe", "a"}, {"kafka.group.id", "g"}}), HasSubstr("groupIdPrefix"));
  std::string bad = err({{"subscribe", "a"},
                         {"kafka.sasl.password", "hunter2"},
                         {"kafka.not.a.property", "hunter3"}});
  EXPECT_THAT(bad, HasSubstr("kafka.not.a.property"));
  EXPECT_THAT(bad, Not(HasSubstr("hunter")));
  auto ok = CreateSource("kafka", Context({{"subscribe", "a"},
                                           {"kafka.sasl.password", "hunter2"},
                                           {"kafka.sasl.username", "u"}}));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_THAT((*ok)->Description(), Not(HasSubstr("hunter2")));
  EXPECT_TRUE(IsSecretOption("kafka.sasl.password"));
  EXPECT_TRUE(IsSecretOption("kafka.ssl.key.password"));
  EXPECT_TRUE(IsSecretOption("kafka.sasl.jaas.config"));
  EXPECT_FALSE(IsSecretOption("kafka.bootstrap.servers"));
}

// A header key is a string in Spark's rows: Kafka's Java clients decode it with new String(bytes,
// UTF_8). The expected texts are Java 17's (String(byte[], UTF_8) through the Spark peer's JVM;
// 20,000 random byte strings of 1-7 bytes gave the same as HeaderKeyText, 2026-12-02).
TEST(KafkaHeaderKeyTest, BytesThatAreNotUtf8BecomeReplacementCharactersAsJava) {
  const std::string r = "\xEF\xBF\xBD";  // U+FFFD
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"trace", "trace"},
      {"\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"},  // a valid 4-byte sequence is kept
      {"\xFF", r},
      {"a\xC3", "a" + r},  // truncated at the end: one
      {"\xE2\x82", r},     // truncated 3-byte: one
      {"\xE2\x82"
       "A",
       r + "A"},                    // cut short by an ASCII byte: one, then the byte
      {"\xC0\xAF", r + r},          // overlong 2-byte: one per byte
      {"\xE0\x80\x80", r + r + r},  // overlong 3-byte: one per byte
      {"\xED\xA0\x80", r},          // an encoded surrogate: one for three bytes
      {"\xED\xA0"
       "A",
       r + "A"},                            // the JDK counts ED A0 as one sequence
      {"\xF4\x90\x80\x80", r + r + r + r},  // above U+10FFFF: one per byte
      {"\xF0\x9F\x98", r},                  // truncated 4-byte: one
      {"k\xF0\x9F\x98x", "k" + r + "x"},
      {"\xE2(\xA1", r + "(" + r},
      {"\x80\x80", r + r},
      {"\xF5\x80", r + r},
      {"\xF8\x88\x80\x80\x80", r + r + r + r + r},
      {"\xE1\x80\xC0", r + r},
      {"\xEF\xBF\xBD", r},
  };
  for (const auto& [bytes, want] : cases) {
    EXPECT_EQ(KafkaSource::HeaderKeyText(bytes), want) << ::testing::PrintToString(bytes);
  }
}

// A record whose header key is not UTF-8 failed every batch that read it with includeHeaders
// ("decoding record headers: Conversion Error: ... could not convert blob to UTF8 string"), so
// the query could never get past it (found by kafka_record_fuzzer). Now its key reads as Java's
// clients decode it, the value keeps its bytes, and the records around it read as before.
TEST_F(KafkaSourceTest, HeaderKeyThatIsNotUtf8ReadsAsSparkDecodesIt) {
  cluster_.CreateTopic("h", 1);
  cluster_.ProduceWithHeaders("h", 0, "a", {{"ok", "1"}});
  cluster_.ProduceWithHeaders(
      "h", 0, "b", {{"bad\xFF\xC3", std::string("\xFF\x00v", 3)}, {"\xED\xA0\x80", std::nullopt}});
  cluster_.ProduceWithHeaders("h", 0, "c", {{"ok", "3"}});
  cluster_.Flush();
  auto src =
      Make({{"subscribe", "h"}, {"startingOffsets", "earliest"}, {"includeHeaders", "true"}});
  ASSERT_TRUE(src);
  auto end = src->LatestOffset(std::nullopt, ReadLimit{});
  ASSERT_TRUE(end.ok() && end->has_value()) << end.status().ToString();
  auto batch = src->GetBatch(std::nullopt, **end);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  auto conn = engine_->Connect();
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE((*conn)->RegisterBatch("rows", *batch).ok());
  auto rows = (*conn)->Query(
      "SELECT decode(value) || '|' || array_to_string(list_transform(headers, h -> hex(h.key) || "
      "'=' || coalesce(hex(h.value), 'NULL')), ',') FROM rows ORDER BY \"offset\"");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  std::vector<std::string> got;
  for (int64_t i = 0; i < rows->num_rows(); ++i) got.push_back(rows->GetString(i, 0).value_or(""));
  // "bad" + U+FFFD U+FFFD; a surrogate's three bytes are one U+FFFD.
  EXPECT_EQ(got, (std::vector<std::string>{"a|6F6B=31", "b|626164EFBFBDEFBFBD=FF0076,EFBFBD=NULL",
                                           "c|6F6B=33"}));
}

}  // namespace
}  // namespace sluice::sources::kafka
