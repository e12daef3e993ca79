// Test helpers for src/engine/*_test.cc (not part of the library).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "engine/engine.h"

namespace sluice::engine::testing {

// An engine and one connection per test. `Base` is ::testing::Test or a
// ::testing::TestWithParam<T> for a parameterized suite.
template <typename Base>
class EngineTestOf : public Base {
 protected:
  void SetUp() override {
    auto engine = Engine::Open();
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).ValueOrDie();
    auto conn = engine_->Connect();
    ASSERT_TRUE(conn.ok()) << conn.status().ToString();
    conn_ = std::move(conn).ValueOrDie();
  }

  // Runs `sql`, failing the test on error.
  Batch Q(const std::string& sql) {
    auto r = conn_->Query(sql);
    EXPECT_TRUE(r.ok()) << sql << " -> " << r.status().ToString();
    return r.ok() ? *r : Batch();
  }

  // The single value of `sql` as text ("NULL" for NULL).
  std::string Scalar(const std::string& sql) {
    Batch b = Q(sql);
    if (b.num_rows() < 1 || b.num_columns() < 1) return "<no rows>";
    return b.GetString(0, 0).value_or("NULL");
  }

  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Connection> conn_;
};

using EngineTest = EngineTestOf<::testing::Test>;

// A fresh directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sluice_engine_XXXXXX").string();
    char* p = ::mkdtemp(tmpl.data());
    path_ = p ? std::string(p) : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace sluice::engine::testing
