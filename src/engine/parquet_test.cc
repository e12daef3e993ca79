#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/strings.h"
#include "engine/duckdb_convert.h"
#include "engine/engine.h"
#include "engine/parquet_copy_stats.h"
#include "engine/parquet_field_ids.h"
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

// Columns of the types COPY ... RETURN_STATS reports exactly take their statistics from it (no
// second statement); whichever path a column takes, its statistics must equal the aggregate
// query's. Each case: the source, and the columns ColumnStatsFromCopy must accept.
TEST_F(ParquetTest, CopyStatsEqualAggregateStats) {
  struct Case {
    std::string source;
    std::set<std::string> from_copy;
  };
  const std::vector<Case> cases = {
      // Nulls, an all-null column, non-ASCII, empty and over-256-byte strings, a column name
      // needing quotes; several row groups.
      {"SELECT CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 37 % 1001 - 500) END::BIGINT AS i, "
       "(i % 100)::TINYINT AS t, (i % 3000)::SMALLINT AS sm, (-i)::INTEGER AS \"a\"\"b\", "
       "CASE WHEN i % 5 = 0 THEN NULL WHEN i = 3 THEN '' WHEN i = 4 THEN 'é' "
       "ELSE 'v' || i END AS s, "
       "CASE WHEN i = 9 THEN repeat('z', 300) ELSE 'short' || i END AS long_s, "
       "NULL::VARCHAR AS nothing FROM range(1, 5001) t(i)",
       {"i", "t", "sm", "a\"b", "s", "nothing"}},
      // Floating point, decimals, dates and timestamps; booleans and TIMESTAMPTZ are computed.
      {"SELECT (i / 3.0)::DOUBLE AS d, (i * 0.1)::FLOAT AS f, (i * 1.25)::DECIMAL(10, 2) AS dec, "
       "DATE '2026-01-01' + i::INTEGER AS dt, "
       "TIMESTAMP '2026-11-30 12:00:00.5' + i * INTERVAL 1 SECOND AS ts, "
       "TIMESTAMPTZ '2026-11-30 12:00:00+00' + i * INTERVAL 1 SECOND AS tz, i > 5 AS b, "
       "CASE WHEN i % 3 = 0 THEN NULL ELSE -i * 1e300 END AS big FROM range(1, 3001) t(i)",
       {"d", "f", "dec", "dt", "ts", "big"}},
      // NaN, infinities and signed zeros: computed, except where no NaN or zero bound shows.
      {"SELECT CASE WHEN i = 7 THEN 'nan'::DOUBLE ELSE i::DOUBLE END AS with_nan, "
       "CASE WHEN i = 1 THEN '-0.0'::DOUBLE WHEN i = 2 THEN 0.0 ELSE i END::DOUBLE AS zeros, "
       "CASE WHEN i = 3 THEN 'inf'::DOUBLE WHEN i = 4 THEN '-inf'::DOUBLE ELSE i END::DOUBLE "
       "AS infs, CASE WHEN i = 5 THEN 'nan'::FLOAT ELSE i END::FLOAT AS fnan "
       "FROM range(1, 101) t(i)",
       {"infs"}},
  };
  for (size_t n = 0; n < cases.size(); ++n) {
    const Case& c = cases[n];
    testing::TempDir dir;
    ParquetWriteOptions options;
    options.row_group_size = 1000;
    Batch batch = Q(c.source);
    auto info = conn_->WriteParquet(batch, dir.File("c.parquet"), options);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    auto stats = ByColumn(*info);
    ASSERT_EQ(stats.size(), batch.num_columns()) << "case " << n;

    // Which columns COPY's statistics cover.
    Batch copied = Q("COPY (" + c.source + ") TO " + QuoteLiteral(dir.File("d.parquet")) +
                     " (FORMAT parquet, ROW_GROUP_SIZE 1000, RETURN_STATS true)");
    auto stats_col = copied.ColumnIndex("column_statistics");
    ASSERT_TRUE(stats_col.has_value());
    const duckdb::Value value = copied.data()->collection->GetRows().GetValue(*stats_col, 0);

    for (const Field& field : batch.schema()) {
      const std::string& column = field.name;
      auto from_copy = internal::ColumnStatsFromCopy(field, value, batch.num_rows());
      EXPECT_EQ(from_copy.has_value(), c.from_copy.count(column) == 1)
          << "case " << n << " column " << column;
      const std::string quoted = QuoteIdentifier(column);
      const std::string from = " FROM (" + c.source + ")";
      const ColumnStats& got = stats[column];
      EXPECT_EQ(got.min.value_or("NULL"),
                Scalar("SELECT coalesce(CAST(min(" + quoted + ") AS VARCHAR), 'NULL')" + from))
          << "case " << n << " column " << column;
      EXPECT_EQ(got.max.value_or("NULL"),
                Scalar("SELECT coalesce(CAST(max(" + quoted + ") AS VARCHAR), 'NULL')" + from))
          << "case " << n << " column " << column;
      EXPECT_EQ(std::to_string(got.null_count),
                Scalar("SELECT count(*) - count(" + quoted + ")" + from))
          << "case " << n << " column " << column;
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

// Field ids land on the Parquet schema elements named, as Spark writes them for Delta column
// mapping: struct fields at any depth, none on list element / map key-value steps.
TEST_F(ParquetTest, WritesFieldIds) {
  testing::TempDir dir;
  Batch b =
      Q("SELECT 1::BIGINT AS \"col-a\", {'x': 1, 'y': 'q'} AS s, [{'e': 1}] AS l, "
        "MAP {'k': {'v': 2}} AS m, 5 AS plain");
  std::vector<ParquetFieldId> ids = {
      {"col-a", 1, {}},
      {"s", 3, {{"x", 4, {}}, {"y", 5, {}}}},
      {"l", 6, {{"element", std::nullopt, {{"e", 7, {}}}}}},
      {"m", 9, {{"value", std::nullopt, {{"v", 10, {}}}}}},
  };
  const std::string path = dir.File("ids.parquet");
  auto info = WriteParquetWithFieldIds(conn_.get(), b, path, {}, ids);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->num_rows, 1);
  EXPECT_EQ(ByColumn(*info)["col-a"].max, "1");  // statistics as without ids
  Batch schema = Q("SELECT name, field_id FROM parquet_schema(" + QuoteLiteral(path) +
                   ") WHERE name <> 'duckdb_schema' ORDER BY ALL");
  std::map<std::string, std::optional<std::string>> got;
  for (int64_t r = 0; r < schema.num_rows(); ++r)
    got[*schema.GetString(r, 0)] = schema.GetString(r, 1);
  std::map<std::string, std::optional<std::string>> want = {{"col-a", "1"},
                                                            {"s", "3"},
                                                            {"x", "4"},
                                                            {"y", "5"},
                                                            {"l", "6"},
                                                            {"list", std::nullopt},
                                                            {"element", std::nullopt},
                                                            {"e", "7"},
                                                            {"m", "9"},
                                                            {"key_value", std::nullopt},
                                                            {"key", std::nullopt},
                                                            {"value", std::nullopt},
                                                            {"v", "10"},
                                                            {"plain", std::nullopt}};
  EXPECT_EQ(got, want);
  // The rows read back unchanged.
  Batch back = Q("SELECT \"col-a\", s.y, l[1].e, m['k'].v, plain FROM read_parquet(" +
                 QuoteLiteral(path) + ")");
  EXPECT_EQ(back.GetString(0, 1), "q");
  EXPECT_EQ(back.GetString(0, 3), "2");
}

TEST_F(ParquetTest, FieldIdsOptionSql) {
  EXPECT_EQ(*FieldIdsOptionSql({}), "");
  EXPECT_EQ(*FieldIdsOptionSql({{"a", std::nullopt, {}}}), "");
  EXPECT_EQ(*FieldIdsOptionSql({{"it's", 2, {}}, {"s", std::nullopt, {{"x", 4, {}}}}}),
            "{'it''s': 2, 's': {'x': 4}}");
  auto reserved = FieldIdsOptionSql({{"s", 1, {{"__duckdb_field_id", 2, {}}}}});
  ASSERT_FALSE(reserved.ok());
  EXPECT_NE(reserved.status().message().find("'s.__duckdb_field_id'"), std::string::npos);
  auto twice = FieldIdsOptionSql({{"a", 1, {}}, {"a", 2, {}}});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("'a' is given twice"), std::string::npos);
}

}  // namespace
}  // namespace sluice::engine
