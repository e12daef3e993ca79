// Test helper (not part of the library): JSON edge cases for the differential tests of
// engine/json_decoder.h against DuckDB's SQL JSON functions (json_decoder_test.cc,
// sources/file_source_json_test.cc).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace sluice::engine::testing {

// A schema with every type JsonDecoder decodes, as schema text and as key names in order.
inline const char* JsonCorpusSchemaText() {
  return "b BOOLEAN, ti TINYINT, si SMALLINT, i INTEGER, bi BIGINT, f FLOAT, d DOUBLE, "
         "s VARCHAR, dt DATE, ts TIMESTAMP, tz TIMESTAMPTZ, m2 DECIMAL(4,1), m4 DECIMAL(9,3), "
         "m8 DECIMAL(18,2), m16 DECIMAL(38,10)";
}
inline std::vector<std::string> JsonCorpusKeys() {
  return {"b", "ti", "si", "i", "bi", "f", "d", "s", "dt", "ts", "tz", "m2", "m4", "m8", "m16"};
}

// JSON value texts that stress the conversions.
inline std::vector<std::string> JsonEdgeValues() {
  // clang-format off
  return {
      // numbers
      "0", "1", "-1", "-0", "0.0", "-0.0", "1.5", "-1.5", "2.5", "0.5", "1e3", "1E3", "1e-3", "1.0",
      "10.0e0", "123456789012345678", "9223372036854775807", "9223372036854775808",
      "-9223372036854775808", "-9223372036854775809", "18446744073709551615",
      "18446744073709551616", "123456789012345678901234567890", "-123456789012345678901234567890",
      "1e400", "-1e400", "1e-400", "127", "128", "-128", "-129", "255", "32767", "32768", "-32769",
      "2147483647", "2147483648", "-2147483649", "3.4028235e38", "3.5e38", "1e-50", "0.1",
      "0.30000000000000004", "1234567.125", "1e20", "1e21", "1e16", "123e-2", "1.005", "12.345",
      "-999.95", "999.94", "999.96", "99999999.995", "1e-10", "1.23456789012e-5", "NaN", "Infinity",
      "-Infinity", "nan", "inf",
      // literals
      "true", "false", "null",
      // strings
      "\"\"", "\"12\"", "\" 12 \"", "\"+12\"", "\"-0\"", "\"1.5\"", "\"2.5\"", "\"1e3\"",
      "\"0x1F\"", "\"1_000\"", "\"12.345\"", "\"1.005\"", "\" 999.95\"", "\"1e2\"",
      "\"-0.05\"", "\"abc\"", "\"true\"", "\"false\"", "\"t\"", "\"yes\"", "\"1\"",
      "\"0\"", "\"12a\"", "\"9223372036854775808\"", "\"nan\"", "\"inf\"", "\"-Infinity\"",
      "\"2026-11-30 12:00:00\"", "\"2026-11-30T12:00:00Z\"", "\"2026-11-30 12:00:00+02:00\"",
      "\"2026-11-30 12:00:00.123456\"", "\"2026-11-30 12:00:00.123456789\"", "\"2026-11-30\"",
      "\"2026-02-30\"", "\"2024-02-29 23:59:59\"", "\"2026-11-30 25:00:00\"", "\"infinity\"",
      "\"-infinity\"", "\"epoch\"", "\"2026-11-30 12:00:00 Europe/Paris\"",
      "\"  2026-11-30 12:00:00  \"", "\"294247-01-10 04:00:54.775807\"",
      "\"290309-12-22 (BC) 00:00:00\"", "\"1-01-01\"", "\"20261130\"", "\"caf\\u00e9\"",
      "\"\\ud83d\\ude00\"", "\"a\\\"b\"", "\"tab\\there\"", "\"nl\\n\"", "\"\\u0000\"",
      "\"\\u001f\"", "\"/\\/\"", "\"\xc3\xa9\"", "\"\\u2028\"", "\"back\\\\slash\"",
      "\"a string that is longer than twelve bytes\"",
      // containers
      "[]", "[1,2]", "[1, 2.50, \"x\"]", "{}", "{\"a\":1}", "{\"a\": {\"b\": [true, null]}}",
      "{\"x\":\"\\u00e9\\n\"}", "[1e3]", "[-0]", "[18446744073709551616]", "[NaN,-Infinity]",
      "[1,2,]", "{\"a\":1,}", "[\"\\u0001\"]", "[[[]]]", "{\"a\":1,\"a\":2}",
  };
  // clang-format on
}

// Whole lines: not objects, invalid JSON, duplicates, unknown keys, whitespace.
inline std::vector<std::string> JsonEdgeLines() {
  // clang-format off
  return {
      "not json", "{", "{\"i\":1", "{\"i\":1,}", "[1,2,]", "{\"i\":1}x", "  {\"i\":1}  ",
      "\t{\"b\":true}", "[{\"i\":1}]", "1", "\"str\"", "null", "true", "{\"d\":NaN}",
      "{\"i\":1,\"i\":2}", "{\"i\":1,\"i\":\"x\"}", "{\"i\":\"x\",\"i\":1}", "{\"i\":null,\"i\":3}",
      "{}", "{} ", "{/*c*/}", "{'i':1}", "{\"i\":01}", "{\"i\":.5}", "{\"i\":1.}", "{\"i\":-}",
      "{\"s\":\"\\x\"}", "{\"s\":\"\\ud800\"}", "{\"s\":\"\\udc00x\"}", "{\"b\":tru}",
      "{\"i\":1}{\"i\":2}", "{\"i\":1 , \"s\" : \"x\" }", "{\"zz\":1}",
      "{\"zz\":{\"n\":[1,2.0]},\"zz\":2}", "{\"q\\\"k\":1}", "{\"\\u00e9\":1}", "{\"k\\u0001\":1}",
      "{\"a b\":null}", "{\"zz\":1.50,\"i\":1.5,\"s\":[1.0,-0]}", "{\"I\":1,\"S\":\"case\"}",
      "{\"i\":{\"x\":1},\"b\":[],\"ts\":5,\"tz\":true,\"dt\":1.5}", "{\"zz\":\"a\\/b\\u00e9\"}",
      "{\"s\":\"x\",\"zz\":null,\"yy\":[],\"zz\":3}", "{\"d\":1e400,\"f\":-1e400}",
      "{\"\xf0\x9f\x98\x80\":\"\xf0\x9f\x98\x80\"}", "{\"i\":1}\t", "{\"s\":\"\t\"}",
      "{\"s\":\"\\t\"}",
  };
  // clang-format on
}

// `n` random object lines built from the edge values under corpus keys and unknown keys, in
// random order, with random duplicates and spacing; a few non-objects. Deterministic per seed.
inline std::vector<std::string> JsonRandomLines(size_t n, uint32_t seed) {
  const std::vector<std::string> values = JsonEdgeValues();
  std::vector<std::string> keys = JsonCorpusKeys();
  for (const char* k : {"zz", "extra", "q\\\"k", "\\u00e9t\\u00e9", "I", "nested"})
    keys.push_back(k);
  std::mt19937 rng(seed);
  auto pick = [&](size_t m) { return static_cast<size_t>(rng() % m); };
  std::vector<std::string> out;
  for (size_t r = 0; r < n; ++r) {
    if (pick(40) == 0) {
      out.push_back(values[pick(values.size())]);  // not an object (or invalid)
      continue;
    }
    std::string line = "{";
    const size_t members = pick(keys.size() + 3);
    for (size_t m = 0; m < members; ++m) {
      if (m) line += pick(4) == 0 ? " , " : ",";
      line += "\"" + keys[pick(keys.size())] + "\"" + (pick(5) == 0 ? " : " : ":");
      line += values[pick(values.size())];
    }
    line += "}";
    out.push_back(line);
  }
  return out;
}

}  // namespace sluice::engine::testing
