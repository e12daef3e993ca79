#include "engine/json_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/batch_builder.h"
#include "engine/engine.h"
#include "engine/json_test_corpus.h"
#include "engine/test_util.h"

namespace sluice::engine {
namespace {

using JsonDecoderTest = testing::EngineTest;

Field F(std::string name, TypeId id) { return Field{std::move(name), DataType{id}, true}; }

std::string Cell(const Batch& b, int64_t r, size_t c) { return b.GetString(r, c).value_or("NULL"); }

TEST_F(JsonDecoderTest, DecodesTypedColumnsBadValuesAndUnknownKeys) {
  JsonDecoderOptions o;
  o.unknown_keys = JsonUnknownKeys::kKeysAndValues;
  o.extra_columns = {"note"};
  auto d = JsonDecoder::Make({F("id", TypeId::kBigInt), F("name", TypeId::kVarchar),
                              F("ok", TypeId::kBoolean), F("ts", TypeId::kTimestamp)},
                             o);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  JsonDecoder& dec = **d;
  EXPECT_EQ(dec.schema().size(), 5u);
  EXPECT_EQ(dec.schema()[4].name, "note");
  JsonRow row;
  ASSERT_TRUE(
      dec.Decode(R"({"id":"12","name":{"a": [1, 2.50]},"ok":true,"ts":"2026-11-30 12:00:00"})",
                 &row)
          .ok());
  EXPECT_TRUE(row.is_object);
  EXPECT_TRUE(row.bad_values.empty());
  EXPECT_TRUE(row.unknown_keys.empty());
  ASSERT_TRUE(dec.SetExtra(0, "hello").ok());
  ASSERT_TRUE(dec.EndRow().ok());

  ASSERT_TRUE(dec.Decode(R"({"id":1.5,"extra":{"k" : null},"ts":5,"id":7,"extra":1})", &row).ok());
  EXPECT_TRUE(row.is_object);
  ASSERT_EQ(row.bad_values.size(), 2u);
  EXPECT_EQ(row.bad_values[0].column, 0u);
  EXPECT_EQ(row.bad_values[0].json, "1.5");
  EXPECT_EQ(row.bad_values[1].column, 3u);
  EXPECT_EQ(row.bad_values[1].json, "5");
  ASSERT_EQ(row.unknown_keys.size(), 2u);  // repeated keys repeated, with the first value
  EXPECT_EQ(row.unknown_keys[0].key, "extra");
  EXPECT_EQ(row.unknown_keys[0].key_json, "\"extra\"");
  EXPECT_EQ(row.unknown_keys[0].value_json, "{\"k\":null}");
  EXPECT_EQ(row.unknown_keys[1].value_json, "{\"k\":null}");
  ASSERT_TRUE(dec.EndRow().ok());

  ASSERT_TRUE(dec.Decode("[1,2]", &row).ok());
  EXPECT_FALSE(row.is_object);
  ASSERT_TRUE(dec.EndRow().ok());
  ASSERT_TRUE(dec.Decode("{\"id\":", &row).ok());
  EXPECT_FALSE(row.is_object);
  ASSERT_TRUE(dec.SetExtra(0, std::nullopt).ok());
  ASSERT_TRUE(dec.EndRow().ok());

  EXPECT_TRUE(dec.Decode("\xff", &row).IsInvalidArgument());  // nothing appended
  // Invalid UTF-8 inside strings and keys: a surrogate, an overlong form, beyond U+10FFFF.
  EXPECT_TRUE(dec.Decode("{\"name\":\"\xed\xa0\x80\"}", &row).IsInvalidArgument());
  EXPECT_TRUE(dec.Decode("{\"name\":\"\xc0\xaf\"}", &row).IsInvalidArgument());
  EXPECT_TRUE(dec.Decode("{\"\xf4\x90\x80\x80\":1}", &row).IsInvalidArgument());
  EXPECT_TRUE(dec.EndRow().IsInvalidArgument());
  EXPECT_EQ(dec.num_rows(), 4);

  auto b = dec.Finish();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(b->num_rows(), 4);
  EXPECT_EQ(Cell(*b, 0, 0), "12");
  EXPECT_EQ(Cell(*b, 0, 1), "{\"a\":[1,2.5]}");
  EXPECT_EQ(Cell(*b, 0, 2), "true");
  EXPECT_EQ(Cell(*b, 0, 3), "2026-11-30 12:00:00");
  EXPECT_EQ(Cell(*b, 0, 4), "hello");
  for (size_t c = 0; c < 5; ++c) EXPECT_EQ(Cell(*b, 1, c), "NULL") << c;
  for (int64_t r = 2; r < 4; ++r) {
    for (size_t c = 0; c < 5; ++c) EXPECT_EQ(Cell(*b, r, c), "NULL") << r << "," << c;
  }
  auto empty = dec.Finish();
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->num_rows(), 0);
  EXPECT_EQ(empty->num_columns(), 5u);
}

TEST_F(JsonDecoderTest, FinishAllJoinsDecodersInOrder) {
  std::vector<std::unique_ptr<JsonDecoder>> decoders;
  for (int d = 0; d < 3; ++d) {
    auto made = JsonDecoder::Make({F("id", TypeId::kBigInt), F("s", TypeId::kVarchar)});
    ASSERT_TRUE(made.ok());
    decoders.push_back(std::move(made).ValueOrDie());
  }
  JsonRow row;
  // 3,000 rows in the first (past a chunk), none in the second, 2 in the third.
  for (int r = 0; r < 3000; ++r) {
    ASSERT_TRUE(decoders[0]
                    ->Decode("{\"id\":" + std::to_string(r) +
                                 ",\"s\":\"a string longer than twelve bytes\"}",
                             &row)
                    .ok());
    ASSERT_TRUE(decoders[0]->EndRow().ok());
  }
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(decoders[2]->Decode("{\"id\":" + std::to_string(-r) + "}", &row).ok());
    ASSERT_TRUE(decoders[2]->EndRow().ok());
  }
  std::vector<JsonDecoder*> all = {decoders[0].get(), decoders[1].get(), decoders[2].get()};
  auto b = JsonDecoder::FinishAll(all);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(b->num_rows(), 3002);
  EXPECT_EQ(Cell(*b, 0, 0), "0");
  EXPECT_EQ(Cell(*b, 2999, 0), "2999");
  EXPECT_EQ(Cell(*b, 2999, 1), "a string longer than twelve bytes");
  EXPECT_EQ(Cell(*b, 3001, 0), "-1");
  EXPECT_EQ(Cell(*b, 3001, 1), "NULL");
  for (auto* d : all) EXPECT_EQ(d->num_rows(), 0);
  auto again = JsonDecoder::FinishAll(all);  // empty now
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->num_rows(), 0);

  auto other = JsonDecoder::Make({F("id", TypeId::kInteger)});
  ASSERT_TRUE(other.ok());
  std::vector<JsonDecoder*> mixed = {decoders[0].get(), other->get()};
  EXPECT_TRUE(JsonDecoder::FinishAll(mixed).status().IsInvalidArgument());
  EXPECT_TRUE(JsonDecoder::FinishAll({}).status().IsInvalidArgument());
  ASSERT_TRUE(decoders[1]->Decode("{}", &row).ok());
  EXPECT_TRUE(JsonDecoder::FinishAll(all).status().IsInvalidArgument());  // row in progress
}

TEST_F(JsonDecoderTest, SupportsOnlyScalarTypesAndDistinctNames) {
  EXPECT_TRUE(JsonDecoder::Supports({F("a", TypeId::kDate), F("b", TypeId::kTimestampTz)}));
  EXPECT_FALSE(JsonDecoder::Supports({}));
  EXPECT_FALSE(JsonDecoder::Supports({F("", TypeId::kBigInt)}));
  EXPECT_FALSE(JsonDecoder::Supports({F("a", TypeId::kBigInt), F("A", TypeId::kBigInt)}));
  DataType dec{TypeId::kDecimal};
  dec.precision = 10;
  dec.scale = 2;
  EXPECT_TRUE(JsonDecoder::Supports({Field{"a", dec, true}}));
  dec.scale = 11;
  EXPECT_FALSE(JsonDecoder::Supports({Field{"a", dec, true}}));
  EXPECT_FALSE(JsonDecoder::Supports({F("a", TypeId::kUuid)}));
  EXPECT_FALSE(JsonDecoder::Supports({F("a", TypeId::kHugeInt)}));
  EXPECT_FALSE(JsonDecoder::Make({F("a", TypeId::kBlob)}).ok());
}

TEST_F(JsonDecoderTest, QuoteJsonStringIsToJson) {
  for (std::string s :
       {"", "plain", "q\"b\\s", "tab\tnl\n\x01", "caf\xc3\xa9 /x", "\xe2\x80\xa8"}) {
    auto q = JsonDecoder::QuoteJsonString(s);
    ASSERT_TRUE(q.ok());
    ASSERT_TRUE(conn_
                    ->RegisterBatch("s",
                                    [&] {
                                      BatchBuilder b({F("v", TypeId::kVarchar)});
                                      EXPECT_TRUE(b.AppendString(s).ok());
                                      EXPECT_TRUE(b.EndRow().ok());
                                      return *b.Finish();
                                    }())
                    .ok());
    EXPECT_EQ(*q, Scalar("SELECT to_json(v)::VARCHAR FROM s"));
  }
  EXPECT_FALSE(JsonDecoder::QuoteJsonString("\xff").ok());
}

// The decoder against DuckDB's SQL over the same texts: json_valid/json_type for objects,
// json_transform for the values (integers: NULL for json_type 'DOUBLE'), json_extract for bad
// values, json_keys + to_json + json_extract for unknown keys.
TEST_F(JsonDecoderTest, MatchesDuckDbJsonFunctions) {
  const std::vector<std::string> keys = testing::JsonCorpusKeys();
  auto decimal = [](std::string name, uint8_t precision, uint8_t scale) {
    DataType t{TypeId::kDecimal};
    t.precision = precision;
    t.scale = scale;
    return Field{std::move(name), t, true};
  };
  const Schema schema = {
      F("b", TypeId::kBoolean),    F("ti", TypeId::kTinyInt),     F("si", TypeId::kSmallInt),
      F("i", TypeId::kInteger),    F("bi", TypeId::kBigInt),      F("f", TypeId::kFloat),
      F("d", TypeId::kDouble),     F("s", TypeId::kVarchar),      F("dt", TypeId::kDate),
      F("ts", TypeId::kTimestamp), F("tz", TypeId::kTimestampTz), decimal("m2", 4, 1),
      decimal("m4", 9, 3),         decimal("m8", 18, 2),          decimal("m16", 38, 10)};
  ASSERT_EQ(schema.size(), keys.size());
  std::vector<std::string> lines;
  for (const std::string& v : testing::JsonEdgeValues()) {
    std::string line = "{";
    for (size_t k = 0; k < keys.size(); ++k) line += (k ? ",\"" : "\"") + keys[k] + "\":" + v;
    lines.push_back(line + "}");
    lines.push_back(v);
  }
  for (const std::string& l : testing::JsonEdgeLines()) lines.push_back(l);
  for (const std::string& l : testing::JsonRandomLines(3000, 7)) lines.push_back(l);
  // Rows past a chunk of 2,048, with long strings: the decoder's memory is reused per chunk.

  BatchBuilder lb({F("n", TypeId::kBigInt), F("line", TypeId::kVarchar)});
  JsonDecoderOptions o;
  o.unknown_keys = JsonUnknownKeys::kKeysAndValues;
  auto made = JsonDecoder::Make(schema, o);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  JsonDecoder& dec = **made;
  std::vector<JsonRow> rows;
  for (size_t n = 0; n < lines.size(); ++n) {
    ASSERT_TRUE(lb.AppendInt64(static_cast<int64_t>(n)).ok());
    ASSERT_TRUE(lb.AppendString(lines[n]).ok());
    ASSERT_TRUE(lb.EndRow().ok());
    JsonRow row;
    ASSERT_TRUE(dec.Decode(lines[n], &row).ok()) << lines[n];
    ASSERT_TRUE(dec.EndRow().ok());
    rows.push_back(row);
  }
  auto got = dec.Finish();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(conn_->RegisterBatch("lines", *lb.Finish()).ok());

  std::string spec = "{", paths, names, cols;
  for (size_t k = 0; k < keys.size(); ++k) {
    spec += std::string(k ? "," : "") + "\"" + keys[k] + "\":\"" + schema[k].type.ToSql() + "\"";
    paths += std::string(k ? ", " : "") + "'$.\"" + keys[k] + "\"'";
    names += std::string(k ? ", " : "") + "'" + keys[k] + "'";
    const std::string jt = "jts[" + std::to_string(k + 1) + "]";
    std::string value = "struct_extract(t, '" + keys[k] + "')";
    if (k >= 1 && k <= 4)
      value = "CASE WHEN " + jt + " = 'DOUBLE' THEN NULL ELSE " + value + " END";
    cols += ", " + value + " AS v" + std::to_string(k) + ", CASE WHEN " + value + " IS NULL AND " +
            jt + " <> 'NULL' THEN json_extract(line, '$.\"" + keys[k] + "\"')::VARCHAR END AS x" +
            std::to_string(k);
  }
  spec += "}";
  const std::string sql =
      "WITH p AS (SELECT n, line, CASE WHEN NOT json_valid(line) THEN false WHEN "
      "starts_with(line, '{') THEN true ELSE json_type(line) = 'OBJECT' END AS ok FROM lines), "
      "t AS (SELECT n, line, ok, CASE WHEN ok THEN json_transform(line, '" +
      spec + "') END AS t, CASE WHEN ok THEN json_type(line, [" + paths +
      "]) END AS jts FROM p) SELECT ok" + cols +
      ", CASE WHEN ok THEN coalesce(array_to_string(list_transform(list_filter(json_keys(line), k "
      "-> NOT "
      "list_contains([" +
      names +
      "], k)), k -> to_json(k)::VARCHAR || ':' || json_extract(line, '$.\"' || "
      "replace(replace(k, '\\', '\\\\'), '\"', '\\\"') || '\"')::VARCHAR), ' , '), '') END AS u "
      "FROM t ORDER BY n";
  auto want = conn_->Query(sql);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ASSERT_EQ(want->num_rows(), static_cast<int64_t>(lines.size()));
  ASSERT_EQ(got->num_rows(), static_cast<int64_t>(lines.size()));
  int failures = 0;
  for (size_t n = 0; n < lines.size() && failures < 20; ++n) {
    const auto r = static_cast<int64_t>(n);
    const JsonRow& row = rows[n];
    std::string why;
    if ((Cell(*want, r, 0) == "true") != row.is_object) why += " is_object";
    std::vector<std::string> bad(keys.size(), "NULL");
    for (const auto& b : row.bad_values) bad[b.column] = b.json;
    for (size_t k = 0; k < keys.size(); ++k) {
      if (Cell(*want, r, 1 + 2 * k) != Cell(*got, r, k)) {
        why +=
            " " + keys[k] + ": sql " + Cell(*want, r, 1 + 2 * k) + " decoder " + Cell(*got, r, k);
      }
      if (Cell(*want, r, 2 + 2 * k) != bad[k]) {
        why += " bad " + keys[k] + ": sql " + Cell(*want, r, 2 + 2 * k) + " decoder " + bad[k];
      }
    }
    std::string unknown;
    for (size_t u = 0; u < row.unknown_keys.size(); ++u) {
      unknown +=
          (u ? " , " : "") + row.unknown_keys[u].key_json + ":" + row.unknown_keys[u].value_json;
    }
    if (Cell(*want, r, 1 + 2 * keys.size()) != (row.is_object ? unknown : "NULL")) {
      why += " unknown: sql " + Cell(*want, r, 1 + 2 * keys.size()) + " decoder " + unknown;
    }
    if (!why.empty()) {
      ++failures;
      ADD_FAILURE() << "line " << n << ": " << lines[n] << " ->" << why;
    }
  }
}

}  // namespace
}  // namespace sluice::engine
