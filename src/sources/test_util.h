// Helpers for the source tests: an engine per suite, temp dirs, row rendering, and driving a
// source like the micro-batch loop does.
#pragma once

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "fs/file_system.h"
#include "sources/source.h"

namespace sluice::sources::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sluice-sources-XXXXXX").string();
    char* p = ::mkdtemp(tmpl.data());
    path_ = p ? p : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Every row as "v1|v2|..." (NULL for null), in batch order.
inline std::vector<std::string> Rows(const engine::Batch& b) {
  std::vector<std::string> out;
  for (int64_t r = 0; r < b.num_rows(); ++r) {
    std::string line;
    for (size_t c = 0; c < b.num_columns(); ++c) {
      if (c) line += "|";
      line += b.GetString(r, c).value_or("NULL");
    }
    out.push_back(line);
  }
  return out;
}

inline std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

class SourceTest : public ::testing::Test {
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
  }

  engine::Batch Sql(const std::string& sql) {
    auto b = conn_->Query(sql);
    EXPECT_TRUE(b.ok()) << sql << ": " << b.status().ToString();
    return b.ok() ? *b : engine::Batch();
  }

  SourceContext Ctx(const std::string& checkpoint_dir,
                    std::map<std::string, std::string> options = {}, Clock* clock = nullptr) {
    SourceContext ctx;
    ctx.fs = fs::LocalFileSystem();
    ctx.engine = engine_;
    ctx.checkpoint_dir = checkpoint_dir;
    ctx.options = std::move(options);
    ctx.clock = clock;
    return ctx;
  }

  // LatestOffset that must succeed.
  std::optional<OffsetJson> Latest(Source* s, const std::optional<OffsetJson>& start,
                                   const ReadLimit& limit = {}) {
    auto r = s->LatestOffset(start, limit);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::nullopt;
  }
  std::vector<std::string> Get(Source* s, const std::optional<OffsetJson>& start,
                               const OffsetJson& end) {
    auto r = s->GetBatch(start, end);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? Rows(*r) : std::vector<std::string>{"<error>"};
  }

  static engine::Engine* engine_;
  std::unique_ptr<engine::Connection> conn_;
};

inline engine::Engine* SourceTest::engine_ = nullptr;

}  // namespace sluice::sources::testing
