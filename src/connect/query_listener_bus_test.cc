#include "connect/query_listener_bus.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "spark/connect/commands.pb.h"

namespace sluice::connect {
namespace {

namespace sc = spark::connect;

TEST(QueryListenerBusTest, EventsAreQueuedOnlyWhileAStreamIsOpen) {
  QueryListenerBus bus;
  bus.OnQueryIdle({"q", "r", "2024-01-01T00:00:00.000Z"});  // no stream: dropped
  const uint64_t gen = bus.Open();
  sluice::QueryProgressEvent progress;
  progress.progress = sluice::StreamingQueryProgress(R"({"id":"q","batchId":3})");
  bus.OnQueryProgress(progress);
  bus.OnQueryTerminated({"q", "r", std::string("boom")});
  auto events = bus.Next(gen, std::chrono::milliseconds(0));
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].type, sc::QUERY_PROGRESS_EVENT);
  EXPECT_EQ(nlohmann::json::parse((*events)[0].json)["progress"]["batchId"], 3);
  EXPECT_EQ((*events)[1].type, sc::QUERY_TERMINATED_EVENT);
  nlohmann::json terminated = nlohmann::json::parse((*events)[1].json);
  EXPECT_EQ(terminated["runId"], "r");
  EXPECT_EQ(terminated["exception"], "boom");
  EXPECT_TRUE(terminated["errorClassOnException"].is_null());
  // Nothing more: an empty list on timeout; closed: the stream ends.
  EXPECT_TRUE(bus.Next(gen, std::chrono::milliseconds(1))->empty());
  bus.Close();
  EXPECT_FALSE(bus.Next(gen, std::chrono::milliseconds(1)).has_value());
  EXPECT_FALSE(bus.IsOpen());
}

TEST(QueryListenerBusTest, ASecondOpenEndsTheFirstStream) {
  QueryListenerBus bus;
  const uint64_t first = bus.Open();
  const uint64_t second = bus.Open();
  EXPECT_FALSE(bus.Next(first, std::chrono::milliseconds(1)).has_value());
  EXPECT_TRUE(bus.Next(second, std::chrono::milliseconds(1)).has_value());
}

TEST(QueryListenerBusTest, StartedEventHasSparksFields) {
  nlohmann::json j = nlohmann::json::parse(QueryListenerBus::StartedEventJson("q", "r", "n"));
  EXPECT_EQ(j["id"], "q");
  EXPECT_EQ(j["runId"], "r");
  EXPECT_EQ(j["name"], "n");
  EXPECT_EQ(j["timestamp"].get<std::string>().size(), 24u);  // 2024-01-02T03:04:05.678Z
  EXPECT_TRUE(j["jobTags"].is_array());
  EXPECT_TRUE(
      nlohmann::json::parse(QueryListenerBus::StartedEventJson("q", "r", std::nullopt))["name"]
          .is_null());
}

}  // namespace
}  // namespace sluice::connect
