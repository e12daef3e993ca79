// Listeners: event order, a slow listener does not slow the query, idle events.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <stdexcept>

#include "stream/listener_bus.h"
#include "stream/loop_test_util.h"

namespace sluice::stream {
namespace {

using testing::LoopTest;

class RecordingListener : public StreamingQueryListener {
 public:
  void OnQueryStarted(const QueryStartedEvent& e) override { Record("started:" + e.id); }
  void OnQueryProgress(const QueryProgressEvent& e) override {
    Record("progress:" + std::to_string(e.progress.batch_id) + ":" +
           std::to_string(e.progress.NumInputRows()));
  }
  void OnQueryIdle(const QueryIdleEvent& e) override { Record("idle:" + e.id); }
  void OnQueryTerminated(const QueryTerminatedEvent& e) override {
    Record(std::string("terminated:") + (e.exception ? "error" : "ok"));
  }
  std::vector<std::string> events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  // While blocked, every callback waits (a slow listener).
  void Block() {
    std::lock_guard<std::mutex> lock(mu_);
    blocked_ = true;
  }
  void Unblock() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      blocked_ = false;
    }
    cv_.notify_all();
  }

 private:
  void Record(std::string s) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !blocked_; });
    events_.push_back(std::move(s));
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool blocked_ = false;
  std::vector<std::string> events_;
};

TEST_F(LoopTest, ListenerGetsEventsInOrder) {
  auto bus = std::make_shared<ListenerBus>();
  auto l = std::make_shared<RecordingListener>();
  bus->AddListener(l);
  auto sink = std::make_shared<sinks::MemorySink>();
  AddInts({1, 2});
  auto o = Options();
  o.listener_bus = bus;
  auto q = StartQuery(o, FixedSink(sink));
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  AddInts({3});
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  std::string id = (*q)->id();
  ASSERT_TRUE((*q)->Stop().ok());
  ASSERT_TRUE(bus->WaitUntilEmpty(10000));
  EXPECT_EQ(l->events(), (std::vector<std::string>{"started:" + id, "progress:0:2", "progress:1:1",
                                                   "terminated:ok"}));
}

TEST_F(LoopTest, IdleQueryReportsIdleProgressOnce) {
  auto bus = std::make_shared<ListenerBus>();
  auto l = std::make_shared<RecordingListener>();
  bus->AddListener(l);
  auto o = Options();
  o.listener_bus = bus;
  auto q = StartQuery(o, FixedSink(std::make_shared<sinks::MemorySink>()));
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());  // several idle triggers, within 10 s
  std::string id = (*q)->id();
  auto p = (*q)->LastProgress();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->batch_id, 0);  // the id the next batch will get
  EXPECT_EQ(p->NumInputRows(), 0);
  EXPECT_EQ((*q)->RecentProgress().size(), 1u);
  ASSERT_TRUE((*q)->Stop().ok());
  ASSERT_TRUE(bus->WaitUntilEmpty(10000));
  EXPECT_EQ(l->events(),
            (std::vector<std::string>{"started:" + id, "idle:" + id, "terminated:ok"}));
}

TEST_F(LoopTest, SlowListenerDoesNotSlowTheQuery) {
  auto bus = std::make_shared<ListenerBus>();
  auto l = std::make_shared<RecordingListener>();
  bus->AddListener(l);
  l->Block();  // the listener cannot finish any callback until released
  auto sink = std::make_shared<sinks::MemorySink>();
  for (int i = 0; i < 5; ++i) AddInts({i});
  auto o = Options();
  o.listener_bus = bus;
  auto q = StartQuery(o, FixedSink(sink), "SELECT id FROM __source_0", {.max_files = 1});
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());  // all 5 batches ran while the listener hung
  EXPECT_EQ(sink->RowStrings().size(), 5u);
  EXPECT_TRUE(l->events().empty());
  ASSERT_TRUE((*q)->Stop().ok());
  l->Unblock();
  ASSERT_TRUE(bus->WaitUntilEmpty(10000));
  auto ev = l->events();
  ASSERT_EQ(ev.size(), 7u);
  EXPECT_EQ(ev.front().rfind("started:", 0), 0u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(ev[1 + i], "progress:" + std::to_string(i) + ":1");
  EXPECT_EQ(ev.back(), "terminated:ok");
}

class ThrowingListener : public StreamingQueryListener {
 public:
  void OnQueryStarted(const QueryStartedEvent&) override {
    throw std::runtime_error("listener bug");
  }
  void OnQueryProgress(const QueryProgressEvent&) override { throw 42; }
};

TEST_F(LoopTest, ThrowingListenerDoesNotStopOtherListenersOrTheQuery) {
  auto bus = std::make_shared<ListenerBus>();
  bus->AddListener(std::make_shared<ThrowingListener>());
  auto l = std::make_shared<RecordingListener>();
  bus->AddListener(l);
  AddInts({1});
  auto o = Options();
  o.listener_bus = bus;
  auto q = StartQuery(o, FixedSink(std::make_shared<sinks::MemorySink>()));
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  ASSERT_TRUE((*q)->Stop().ok());
  ASSERT_TRUE(bus->WaitUntilEmpty(10000));
  EXPECT_EQ(l->events().size(), 3u);
  EXPECT_EQ(l->events().back(), "terminated:ok");
}

TEST_F(LoopTest, FailedQueryReportsTerminatedWithError) {
  auto bus = std::make_shared<ListenerBus>();
  auto l = std::make_shared<RecordingListener>();
  bus->AddListener(l);
  AddInts({1});
  auto o = Options();
  o.listener_bus = bus;
  auto q = StartQuery(o, FixedSink(std::make_shared<sinks::MemorySink>()),
                      "SELECT nope FROM __source_0");
  ASSERT_TRUE(q.ok());
  EXPECT_FALSE((*q)->AwaitTermination().ok());
  ASSERT_TRUE(bus->WaitUntilEmpty(10000));
  EXPECT_EQ(l->events().back(), "terminated:error");
}

}  // namespace
}  // namespace sluice::stream
