// Helpers of the Delta DML tests: a table writer + DmlTable over a temp table, table creation
// from SQL, row comparison against DuckDB, and commit inspection.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "delta/dml_util.h"
#include "delta/writer_test_util.h"

namespace sluice::delta::testing {

class DmlTestBase : public WriterTestBase {
 protected:
  void SetUp() override {
    WriterTestBase::SetUp();
    writer_ = Writer();
    ASSERT_TRUE(writer_);
    auto c = engine_->Connect();
    ASSERT_TRUE(c.ok());
    dml_conn_ = c.MoveValueUnsafe();
  }

  DmlTable Table() {
    return DmlTable{writer_.get(), fs::LocalFileSystem(), engine_, dml_conn_.get()};
  }

  // Appends the rows of `select` (one commit).
  void Append(const std::string& select, WriteOptions options = {}) {
    auto r = writer_->Write(Sql(select), options);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  // Rows of `select` evaluated by DuckDB directly, sorted like Rows().
  std::vector<std::string> Expected(const std::string& select) { return Rows(Sql(select)); }

  // Paths of the live files of the latest snapshot.
  std::vector<std::string> LiveFiles() {
    auto t = Reader();
    std::vector<std::string> out;
    if (!t) return out;
    auto s = t->Latest();
    EXPECT_TRUE(s.ok());
    if (!s.ok()) return out;
    for (const auto& f : (*s)->files) out.push_back(f.path);
    return out;
  }

  // commitInfo of `version`.
  nlohmann::json CommitInfo(int64_t version) {
    for (const auto& line : CommitLines(version)) {
      if (line.contains("commitInfo")) return line["commitInfo"];
    }
    return nlohmann::json();
  }
  std::string Metric(int64_t version, const std::string& name) {
    auto ci = CommitInfo(version);
    if (!ci.contains("operationMetrics") || !ci["operationMetrics"].contains(name)) return "<none>";
    return ci["operationMetrics"][name].get<std::string>();
  }
  // Number of actions named `action` in commit `version`.
  int CountActions(int64_t version, const std::string& action) {
    int n = 0;
    for (const auto& line : CommitLines(version)) n += line.contains(action) ? 1 : 0;
    return n;
  }

  // Change rows of versions [start, end] (columns + _change_type), sorted.
  std::vector<std::string> ChangeRows(int64_t start, int64_t end,
                                      const std::vector<std::string>& cols) {
    auto t = Reader();
    if (!t) return {"<no table>"};
    auto b = t->Changes(Version(start), Version(end));
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? Rows(*b, cols) : std::vector<std::string>{"<error>"};
  }

  std::unique_ptr<DeltaTableWriter> writer_;
  std::unique_ptr<engine::Connection> dml_conn_;
};

}  // namespace sluice::delta::testing
