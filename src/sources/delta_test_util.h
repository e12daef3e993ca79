// Delta tables for the source tests, written with the Delta writer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "delta/log_segment.h"
#include "delta/snapshot.h"
#include "delta/table_writer.h"
#include "sources/test_util.h"

namespace sluice::sources::testing {

class DeltaSourceTestBase : public SourceTest {
 protected:
  void SetUp() override {
    SourceTest::SetUp();
    table_ = dir_.path() + "/table";
    ckpt_ = dir_.path() + "/ckpt/sources/0";
  }

  delta::DeltaTableWriter* Writer() {
    if (!writer_) {
      delta::TableWriterOptions o;
      o.commit.sync = false;
      auto w = delta::DeltaTableWriter::Open(fs::LocalFileSystem(), engine_, table_, o);
      EXPECT_TRUE(w.ok()) << w.status().ToString();
      writer_ = w.MoveValueUnsafe();
    }
    return writer_.get();
  }
  // Appends the rows of `sql` (one commit); returns its version.
  int64_t Append(const std::string& sql, bool overwrite = false,
                 std::map<std::string, std::string> configuration = {}) {
    delta::WriteOptions o;
    if (overwrite) o.mode = delta::SaveMode::kOverwrite;
    o.configuration = std::move(configuration);
    auto r = Writer()->Write(Sql(sql), o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && r->version ? r->version->value() : -1;
  }
  // Commits an OPTIMIZE-like rewrite of version `from`'s files: remove + add, dataChange=false.
  int64_t RearrangeCommit(int64_t from, int64_t version) {
    auto actions =
        delta::ReadCommitActions(fs::LocalFileSystem().get(),
                                 table_ + "/_delta_log/" + delta::CommitFileName(Version(from)));
    EXPECT_TRUE(actions.ok());
    std::vector<delta::Action> out;
    delta::CommitInfo ci;
    ci.raw_json = "{\"timestamp\":1,\"operation\":\"OPTIMIZE\"}";
    out.push_back(ci);
    for (const auto& a : *actions) {
      if (const auto* add = std::get_if<delta::AddFile>(&a)) {
        delta::RemoveFile rm;
        rm.path = add->path;
        rm.data_change = false;
        rm.deletion_timestamp = 1;
        out.push_back(rm);
        delta::AddFile again = *add;
        again.data_change = false;
        out.push_back(again);
      }
    }
    EXPECT_TRUE(
        fs::LocalFileSystem()
            ->CreateIfAbsent(table_ + "/_delta_log/" + delta::CommitFileName(Version(version)),
                             delta::SerializeCommit(out))
            .ok());
    return version;
  }

  TempDir dir_;
  std::string table_;
  std::string ckpt_;
  std::unique_ptr<delta::DeltaTableWriter> writer_;
};

}  // namespace sluice::sources::testing
