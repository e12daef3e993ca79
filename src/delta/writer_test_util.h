// Helpers shared by the delta writer tests: an engine per test suite, table paths, log
// validation and DuckDB's own view of data files.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "delta/log_segment.h"
#include "delta/table.h"
#include "delta/table_writer.h"
#include "delta/test_util.h"
#include "delta/write_util.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::delta::testing {

class WriterTestBase : public ::testing::Test {
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
    table_ = dir_.path() + "/table";
  }

  engine::Batch Sql(const std::string& sql) {
    auto b = conn_->Query(sql);
    EXPECT_TRUE(b.ok()) << sql << ": " << b.status().ToString();
    return b.ok() ? *b : engine::Batch();
  }

  std::unique_ptr<DeltaTableWriter> Writer(
      std::shared_ptr<fs::FileSystem> fs = fs::LocalFileSystem(), TableWriterOptions options = {}) {
    options.commit.sync = false;
    auto w = DeltaTableWriter::Open(std::move(fs), engine_, table_, options);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? w.MoveValueUnsafe() : nullptr;
  }

  std::unique_ptr<DeltaTable> Reader() {
    auto t = DeltaTable::Open(fs::LocalFileSystem(), engine_, table_);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? t.MoveValueUnsafe() : nullptr;
  }

  // Rows of the table at `version` (latest when negative), via the reader.
  std::vector<std::string> ReadRows(int64_t version = -1,
                                    const std::vector<std::string>& cols = {}) {
    auto t = Reader();
    if (!t) return {"<no table>"};
    auto snap = version < 0 ? t->Latest() : t->SnapshotAt(Version(version));
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    if (!snap.ok()) return {"<error>"};
    auto b = t->Scan(**snap);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? Rows(*b, cols) : std::vector<std::string>{"<error>"};
  }

  // Parsed lines of commit `version`.
  std::vector<nlohmann::json> CommitLines(int64_t version) {
    auto text =
        fs::LocalFileSystem()->ReadFile(table_ + "/_delta_log/" + CommitFileName(Version(version)));
    EXPECT_TRUE(text.ok()) << text.status().ToString();
    std::vector<nlohmann::json> out;
    if (!text.ok()) return out;
    size_t pos = 0;
    while (pos < text->size()) {
      size_t end = text->find('\n', pos);
      EXPECT_NE(end, std::string::npos) << "commit " << version << " does not end with a newline";
      if (end == std::string::npos) end = text->size();
      out.push_back(nlohmann::json::parse(text->substr(pos, end - pos)));
      pos = end + 1;
    }
    return out;
  }

  // Checks the whole log: contiguous versions from 0, one action (one key) per line, commit 0
  // with protocol and metaData, commitInfo in every commit, and every add's file readable by
  // DuckDB's read_parquet with numRecords rows and the logged size. Returns the latest version.
  int64_t ValidateLog() {
    auto listing = ListLog(fs::LocalFileSystem().get(), table_);
    EXPECT_TRUE(listing.ok()) << listing.status().ToString();
    if (!listing.ok()) return -1;
    int64_t expect = 0;
    for (const auto& [v, f] : listing->commits) {
      EXPECT_EQ(v.value(), expect) << "versions are not contiguous";
      expect = v.value() + 1;
      auto lines = CommitLines(v.value());
      bool has_protocol = false, has_metadata = false, has_commit_info = false;
      for (const auto& line : lines) {
        EXPECT_TRUE(line.is_object());
        EXPECT_EQ(line.size(), 1u) << line.dump();
        if (line.contains("protocol")) has_protocol = true;
        if (line.contains("metaData")) has_metadata = true;
        if (line.contains("commitInfo")) {
          has_commit_info = true;
          const auto& ci = line["commitInfo"];
          EXPECT_EQ(ci.value("engineInfo", ""), "Sluice/0.1.0");
          EXPECT_TRUE(ci.contains("timestamp") && ci.contains("operation") && ci.contains("txnId"));
        }
        if (line.contains("add")) {
          const auto& add = line["add"];
          auto rel = PercentDecodeForTest(add["path"].get<std::string>());
          std::string path = table_ + "/" + rel;
          auto st = fs::LocalFileSystem()->Stat(path);
          EXPECT_TRUE(st.ok()) << path;
          if (st.ok()) {
            EXPECT_EQ(st->size, add["size"].get<int64_t>()) << path;
          }
          auto stats = nlohmann::json::parse(add["stats"].get<std::string>());
          auto count = conn_->Query("SELECT count(*) FROM read_parquet('" + Escape(path) + "')");
          EXPECT_TRUE(count.ok()) << count.status().ToString();
          if (count.ok()) {
            EXPECT_EQ(*count->GetInt64(0, 0), stats["numRecords"].get<int64_t>()) << path;
          }
        }
      }
      if (v.value() == 0) {
        EXPECT_TRUE(has_protocol && has_metadata) << "commit 0 lacks protocol or metaData";
      }
      EXPECT_TRUE(has_commit_info) << "commit " << v << " has no commitInfo";
    }
    return expect - 1;
  }

  static std::string Escape(const std::string& s) {
    std::string out;
    for (char c : s) {
      out += c;
      if (c == '\'') out += '\'';
    }
    return out;
  }
  static std::string PercentDecodeForTest(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '%' && i + 2 < s.size()) {
        out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        out += s[i];
      }
    }
    return out;
  }

  // Data files (*.parquet outside _delta_log) under the table, relative paths.
  std::vector<std::string> DataFiles() {
    std::vector<std::string> out;
    std::error_code ec;
    if (!std::filesystem::exists(table_)) return out;
    for (auto& e : std::filesystem::recursive_directory_iterator(table_, ec)) {
      std::string rel = std::filesystem::relative(e.path(), table_).string();
      if (e.is_regular_file() && rel.rfind("_delta_log", 0) != 0) out.push_back(rel);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  static engine::Engine* engine_;
  std::unique_ptr<engine::Connection> conn_;
  TempDir dir_;
  std::string table_;
};

inline engine::Engine* WriterTestBase::engine_ = nullptr;

}  // namespace sluice::delta::testing
