#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "engine/engine.h"
#include "engine/test_util.h"

namespace sluice::engine {
namespace {

using ParquetTest = testing::EngineTest;

std::map<std::string, ColumnStats> ByColumn(const ParquetFileInfo& info) {
  std::map<std::string, ColumnStats> out;
  for (const ColumnStats& s : info.stats) out[s.column] = s;
  return out;
}

TEST_F(ParquetTest, RoundTripWithStats) {
  testing::TempDir dir;
  Batch b =
      Q("SELECT CASE WHEN i % 3 = 0 THEN NULL ELSE i END AS i, "
        "'s' || lpad(i::VARCHAR, 3, '0') AS s, "
        "TIMESTAMP '2024-01-01 00:00:00' + INTERVAL (i) MINUTE AS ts, "
        "TIMESTAMPTZ '2024-01-01 00:00:00+00' + INTERVAL (i) SECOND AS tstz, "
        "(i / 4)::DECIMAL(10,2) AS d, i / 8 AS dbl, "
        "{'a': i, 'b': {'c': CASE WHEN i = 5 THEN NULL ELSE 'c' || i END}} AS st, "
        "CASE WHEN i < 2 THEN NULL ELSE [i, i + 1] END AS l, "
        "MAP {'k': i} AS m, NULL::VARCHAR AS nothing, DATE '2024-03-01' + i::INTEGER AS dt "
        "FROM range(1, 101) t(i)");
  ASSERT_EQ(b.num_rows(), 100);
  const std::string path = dir.File("a.parquet");
  auto info = conn_->WriteParquet(b, path);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->path, path);
  EXPECT_EQ(info->num_rows, 100);
  EXPECT_EQ(info->size_bytes, static_cast<int64_t>(std::filesystem::file_size(path)));

  auto stats = ByColumn(*info);
  ASSERT_EQ(stats.size(), 12u);  // st expands to st.a and st.b.c
  EXPECT_EQ(stats["i"].min, "1");
  EXPECT_EQ(stats["i"].max, "100");
  EXPECT_EQ(stats["i"].null_count, 33);
  EXPECT_EQ(stats["s"].min, "s001");
  EXPECT_EQ(stats["s"].max, "s100");
  EXPECT_EQ(stats["s"].null_count, 0);
  EXPECT_EQ(stats["ts"].min, "2024-01-01 00:01:00");
  EXPECT_EQ(stats["ts"].max, "2024-01-01 01:40:00");
  EXPECT_EQ(stats["tstz"].min, "2024-01-01 00:00:01+00");
  EXPECT_EQ(stats["tstz"].max, "2024-01-01 00:01:40+00");
  EXPECT_EQ(stats["d"].min, "0.25");
  EXPECT_EQ(stats["d"].max, "25.00");
  EXPECT_EQ(stats["dbl"].min, "0.125");
  EXPECT_EQ(stats["dbl"].max, "12.5");
  EXPECT_EQ(stats["st.a"].min, "1");
  EXPECT_EQ(stats["st.a"].max, "100");
  EXPECT_EQ(stats["st.b.c"].min, "c1");
  EXPECT_EQ(stats["st.b.c"].max, "c99");
  EXPECT_EQ(stats["st.b.c"].null_count, 1);
  EXPECT_FALSE(stats["l"].min.has_value());
  EXPECT_FALSE(stats["l"].max.has_value());
  EXPECT_EQ(stats["l"].null_count, 1);
  EXPECT_FALSE(stats["m"].min.has_value());
  EXPECT_EQ(stats["m"].null_count, 0);
  EXPECT_FALSE(stats["nothing"].min.has_value());
  EXPECT_FALSE(stats["nothing"].max.has_value());
  EXPECT_EQ(stats["nothing"].null_count, 100);
  EXPECT_EQ(stats["dt"].min, "2024-03-02");

  auto back = conn_->ReadParquet({path});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->num_rows(), 100);
  ASSERT_EQ(back->schema(), b.schema());
  for (int64_t r = 0; r < 100; ++r) {
    for (size_t c = 0; c < b.num_columns(); ++c) {
      EXPECT_EQ(back->GetString(r, c), b.GetString(r, c)) << "row " << r << " col " << c;
    }
  }
}

TEST_F(ParquetTest, OverwriteCompressionAndRowGroups) {
  testing::TempDir dir;
  const std::string path = dir.File("x.parquet");
  Batch big = Q("SELECT i, md5(i::VARCHAR) AS h FROM range(20000) t(i)");
  ParquetWriteOptions options;
  options.compression = "zstd";
  options.row_group_size = 4096;
  auto first = conn_->WriteParquet(big, path, options);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->num_rows, 20000);
  EXPECT_GT(std::stoll(Scalar("SELECT count(DISTINCT row_group_id) FROM parquet_metadata(" +
                              std::string("'") + path + "')")),
            1);
  EXPECT_EQ(Scalar("SELECT DISTINCT compression FROM parquet_metadata('" + path + "')"), "ZSTD");

  options.compression = "uncompressed";
  auto second = conn_->WriteParquet(big.Slice(0, 10), path, options);  // overwrite
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->num_rows, 10);
  auto back = conn_->ReadParquet({path});
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->num_rows(), 10);

  options.compression = "bogus";
  auto bad = conn_->WriteParquet(big, path, options);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsInvalidArgument()) << bad.status().ToString();
}

TEST_F(ParquetTest, ReadSeveralFilesAndErrors) {
  testing::TempDir dir;
  ASSERT_TRUE(conn_->WriteParquet(Q("SELECT i FROM range(10) t(i)"), dir.File("1.parquet")).ok());
  ASSERT_TRUE(
      conn_->WriteParquet(Q("SELECT i FROM range(10, 15) t(i)"), dir.File("2.parquet")).ok());
  auto both = conn_->ReadParquet({dir.File("1.parquet"), dir.File("2.parquet")});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->num_rows(), 15);

  auto missing = conn_->ReadParquet({dir.File("nope.parquet")});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
  EXPECT_TRUE(conn_->ReadParquet({}).status().IsInvalidArgument());

  auto no_dir = conn_->WriteParquet(Q("SELECT 1 AS x"), dir.File("no/such/dir/x.parquet"));
  ASSERT_FALSE(no_dir.ok());
  EXPECT_TRUE(no_dir.status().IsIOError() || no_dir.status().IsNotFound())
      << no_dir.status().ToString();
  EXPECT_TRUE(conn_->WriteParquet(Batch(), dir.File("e.parquet")).status().IsInvalidArgument());

  // The temporary view used for the write is gone afterwards.
  EXPECT_EQ(Scalar("SELECT count(*) FROM duckdb_views() WHERE view_name LIKE '__sluice%'"), "0");
}

TEST_F(ParquetTest, EmptyBatch) {
  testing::TempDir dir;
  auto info = conn_->WriteParquet(Q("SELECT 1 AS x, 'a' AS s WHERE false"), dir.File("e.parquet"));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->num_rows, 0);
  ASSERT_EQ(info->stats.size(), 2u);
  EXPECT_FALSE(info->stats[0].min.has_value());
  EXPECT_EQ(info->stats[0].null_count, 0);
  auto back = conn_->ReadParquet({dir.File("e.parquet")});
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->num_rows(), 0);
  EXPECT_EQ(back->num_columns(), 2u);
}

}  // namespace
}  // namespace sluice::engine
