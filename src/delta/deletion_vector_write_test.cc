// Sluice reads tables with deletion vectors but writes none yet (docs/delta.md, "Deletion
// vectors"): every write into one is refused naming the feature and leaves the table as it was,
// DV files included.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "delta/dml_delete.h"
#include "delta/test_util.h"
#include "delta/vacuum.h"
#include "delta/writer_test_util.h"

namespace sluice::delta {
namespace {

using ::testing::HasSubstr;

class DeletionVectorWriteTest : public testing::WriterTestBase {
 protected:
  void SetUp() override {
    WriterTestBase::SetUp();
    table_ = testing::CopyFixture("spark/deletion-vectors", dir_);
    writer_ = Writer();
    ASSERT_TRUE(writer_);
    auto c = engine_->Connect();
    ASSERT_TRUE(c.ok());
    dml_conn_ = c.MoveValueUnsafe();
  }
  DmlTable Table() {
    return DmlTable{writer_.get(), fs::LocalFileSystem(), engine_, dml_conn_.get()};
  }
  void ExpectRefusedAndUnchanged(const Status& st) {
    EXPECT_TRUE(st.IsNotSupported()) << st.ToString();
    EXPECT_THAT(st.message(),
                HasSubstr("'deletionVectors': writes with deletion vectors are not supported yet"));
    EXPECT_FALSE(std::filesystem::exists(table_ + "/_delta_log/00000000000000000003.json"));
    EXPECT_TRUE(std::filesystem::exists(table_ + "/" + kDvFile));
    EXPECT_EQ(ReadRows().size(), 47u);
  }

  static constexpr const char* kDvFile = "deletion_vector_faa9a331-7067-4729-b46d-a6043d8e37ab.bin";
  std::unique_ptr<DeltaTableWriter> writer_;
  std::unique_ptr<engine::Connection> dml_conn_;
};

TEST_F(DeletionVectorWriteTest, AppendIsRefused) {
  ExpectRefusedAndUnchanged(writer_->Write(Sql("SELECT 99::BIGINT AS id")).status());
}

TEST_F(DeletionVectorWriteTest, DeleteIsRefused) {
  ExpectRefusedAndUnchanged(DeleteRows(Table(), std::string("id = 1")).status());
}

TEST_F(DeletionVectorWriteTest, VacuumIsRefusedAndKeepsTheDvFile) {
  VacuumOptions options;
  options.retain_hours = 0;
  options.retention_duration_check = false;
  ExpectRefusedAndUnchanged(Vacuum(Table(), options).status());
}

}  // namespace
}  // namespace sluice::delta
