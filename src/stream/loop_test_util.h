// Test helpers for the micro-batch loop tests: a tiny in-memory source (test-only; the real
// memory source lives in src/sources) and a fixture that builds executions. Header-only.
//
// TestStream holds the data outside any execution, so that it survives a simulated process
// restart (a new MicroBatchExecution on the same checkpoint). Offsets are the number of chunks
// added so far (a JSON number, as Spark's LongOffset); a ReadLimit's max_files caps how many
// chunks one batch takes.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "fs/test_util.h"
#include "sinks/memory_sink.h"
#include "sources/source.h"
#include "stream/micro_batch_execution.h"

namespace sluice::stream::testing {

class TestStream {
 public:
  explicit TestStream(std::string name = "s") : name_(std::move(name)) {}
  void Add(engine::Batch chunk) {
    std::lock_guard<std::mutex> lock(mu_);
    chunks_.push_back(std::move(chunk));
  }
  int64_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int64_t>(chunks_.size());
  }
  std::vector<engine::Batch> Range(int64_t from, int64_t to) const {
    std::lock_guard<std::mutex> lock(mu_);
    return {chunks_.begin() + from, chunks_.begin() + to};
  }
  const std::string& name() const { return name_; }
  engine::Schema schema;  // set before the first execution
  bool supports_available_now = true;
  int64_t get_batch_calls = 0;
  std::vector<std::string> committed;

 private:
  std::string name_;
  mutable std::mutex mu_;
  std::vector<engine::Batch> chunks_;
};

class TestSource final : public sources::Source {
 public:
  explicit TestSource(std::shared_ptr<TestStream> data) : data_(std::move(data)) {}
  std::string Description() const override { return "TestSource[" + data_->name() + "]"; }
  const engine::Schema& schema() const override { return data_->schema; }
  Result<std::optional<sources::OffsetJson>> LatestOffset(
      const std::optional<sources::OffsetJson>& start, const sources::ReadLimit& limit) override {
    int64_t total = snapshot_ >= 0 ? std::min(snapshot_, data_->size()) : data_->size();
    if (total == 0) return std::optional<sources::OffsetJson>();
    int64_t from = start ? std::stoll(*start) : 0;
    int64_t end = total;
    if (!limit.all_available && limit.max_files) end = std::min(total, from + *limit.max_files);
    return std::optional<sources::OffsetJson>(std::to_string(end));
  }
  Status PrepareForAvailableNow() override {
    if (!data_->supports_available_now) return Source::PrepareForAvailableNow();
    snapshot_ = data_->size();
    return Status::OK();
  }
  Result<engine::Batch> GetBatch(const std::optional<sources::OffsetJson>& start,
                                 const sources::OffsetJson& end) override {
    ++data_->get_batch_calls;
    int64_t from = start ? std::stoll(*start) : 0;
    int64_t to = std::stoll(end);
    if (to > data_->size() || from > to) return Status::Internal("bad range");
    return engine::Batch::Concat(data_->Range(from, to));
  }
  Status Commit(const sources::OffsetJson& end) override {
    data_->committed.push_back(end);
    return Status::OK();
  }
  std::map<std::string, std::string> Metrics(
      const std::optional<sources::OffsetJson>& latest) const override {
    return {{"chunksBehind", std::to_string(data_->size() - (latest ? std::stoll(*latest) : 0))}};
  }

 private:
  std::shared_ptr<TestStream> data_;
  int64_t snapshot_ = -1;
};

inline SourceSpec TestSourceSpec(std::shared_ptr<TestStream> data, sources::ReadLimit limit = {}) {
  SourceSpec spec;
  spec.factory = [data](const sources::SourceContext&) -> Result<std::unique_ptr<sources::Source>> {
    return std::make_unique<TestSource>(data);
  };
  spec.read_limit = limit;
  return spec;
}

class LoopTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto e = engine::Engine::Open();
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = e.MoveValueUnsafe().release();
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }
  void SetUp() override {
    auto c = engine_->Connect();
    ASSERT_TRUE(c.ok());
    conn_ = c.MoveValueUnsafe();
    stream_ = std::make_shared<TestStream>("s");
    stream_->schema = Ints({}).schema();
    root_ = dir_.Join("ck");
  }

  // A batch with one BIGINT column `id`.
  engine::Batch Ints(const std::vector<int64_t>& v) {
    std::string sql = "SELECT * FROM (VALUES ";
    for (size_t i = 0; i < v.size(); ++i)
      sql += (i ? ",(" : "(") + std::to_string(v[i]) + "::BIGINT)";
    sql = v.empty() ? "SELECT 0::BIGINT AS id LIMIT 0" : sql + ") t(id)";
    auto b = conn_->Query(sql);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? *b : engine::Batch();
  }
  void AddInts(const std::vector<int64_t>& v) { stream_->Add(Ints(v)); }

  ExecutionOptions Options() {
    ExecutionOptions o;
    o.checkpoint_root = root_;
    o.engine = engine_;
    o.sync = false;
    return o;
  }

  Result<std::unique_ptr<MicroBatchExecution>> StartQuery(
      ExecutionOptions o, SinkFactory sink, std::string sql = "SELECT id FROM __source_0",
      sources::ReadLimit limit = {}) {
    std::vector<SourceSpec> specs;
    specs.push_back(TestSourceSpec(stream_, limit));
    return MicroBatchExecution::Start(std::move(o), std::move(specs),
                                      std::make_unique<SqlPlan>(std::move(sql), 1),
                                      std::move(sink));
  }

  static std::vector<std::string> Sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  }
  static std::vector<std::string> Range(int64_t from, int64_t to) {
    std::vector<std::string> out;
    for (int64_t i = from; i < to; ++i) out.push_back(std::to_string(i));
    return Sorted(out);
  }
  std::vector<int64_t> Ids(const std::string& dir) {
    std::vector<int64_t> out;
    auto l = fs::LocalFileSystem()->List(dir);
    if (!l.ok()) return out;
    for (const auto& f : *l) {
      auto id = ParseBatchFileName(fs::BaseName(f.path));
      if (id) out.push_back(id->value());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  static engine::Engine* engine_;
  std::unique_ptr<engine::Connection> conn_;
  fs::ScopedTempDir dir_;
  std::string root_;
  std::shared_ptr<TestStream> stream_;
};

inline engine::Engine* LoopTest::engine_ = nullptr;

}  // namespace sluice::stream::testing
