// JsonDecoder: JSON texts -> typed columns of a Batch in one pass, with the results of DuckDB's
// json_transform(text, '{"col":"TYPE",...}') (what the files source computed in SQL before),
// plus what a reader needs to rescue bad data: whether the text is a JSON object, the values that
// did not convert, and the keys that are not columns.
//
// Exactness by construction, not by imitation: the text is parsed by DuckDB's own JSON parser
// (the yyjson that libduckdb.so carries, with the read flags of DuckDB's JSON functions: NaN and
// Infinity, trailing commas, integers beyond 64 bits kept as raw text), and every conversion
// calls the DuckDB cast json_transform calls (TryCast, TryCastToDecimal, StringCast, the default
// VARCHAR -> TIMESTAMP/DATE casts), so validity, duplicate keys, "12" -> 12, 1e3, -0, out-of-range
// values and unicode escapes behave as in SQL. json_decoder_test.cc and the files source's
// differential test (src/sources/file_source_json_test.cc) compare both paths. (simdjson, the
// docs/architecture.md choice for hot JSON, accepts another language than DuckDB's reader - no NaN,
// no trailing commas, other big-integer handling - and the rescued texts must be DuckDB's writer's,
// so it could only have matched by imitation; parsing is about a fifth of the decoding CPU.)
//
// Per text:
// - not valid JSON (DuckDB's json_valid) or valid but not an object: every column NULL,
//   JsonRow::is_object false;
// - an object: column c takes the value of the FIRST member whose key equals its name (exact
//   bytes, as json_transform); a missing key or a JSON null gives NULL; a value that does not
//   convert gives NULL and a JsonBadValue {c, value as JSON text};
// - integer columns (TINYINT..BIGINT) also reject numbers that are not integers (1.5, 1e3) and
//   integers beyond 64 bits (JsonBadValue), where json_transform would round: Spark's rule;
//   JsonDecoderOptions::reject_fractional_integers = false keeps json_transform's rounding;
// - the keys that are not columns, when asked (JsonDecoderOptions::unknown_keys).
// A bad value's or an unknown key's JSON text is what DuckDB's json_extract(text, '$."key"')
// gives: the first member with that key, written by DuckDB's JSON writer (compact; strings
// re-escaped by it).
//
// Column types decoded (Supports()): BOOLEAN, TINYINT, SMALLINT, INTEGER, BIGINT, FLOAT, DOUBLE,
// DECIMAL(p,s), VARCHAR, DATE, TIMESTAMP, TIMESTAMP WITH TIME ZONE (the default cast: an offset
// in the text is applied, no session time zone is involved, as in json_transform). Others
// (HUGEINT, unsigned, BLOB, nested, ...) are not: callers keep a SQL path for those schemas.
//
// Output: a Batch with the columns followed by `extra_columns` (VARCHAR), which the caller sets
// per row (e.g. a rescued-data column). Usage per row: Decode(text, &row); SetExtra(...) for each
// extra column (NULL when not set); EndRow(). Finish() at the end.
// Cost: one parse per text (yyjson copies the text into memory that is reused every 2,048 rows);
// values are written straight into the batch's vectors, strings copied into it once.
// Thread safety: one thread at a time per decoder; distinct decoders are independent (they may
// run on several threads at once; FinishAll joins their rows).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/status.h"
#include "engine/engine.h"
#include "engine/types.h"

namespace sluice::engine {

// A value that did not convert to its column's type.
struct JsonBadValue {
  size_t column = 0;  // index in the decoder's columns
  std::string json;   // the value as JSON text (json_extract's)
};

// A member of the object whose key is not a column.
struct JsonUnknownKey {
  std::string key;         // the key, unescaped
  std::string key_json;    // the key as a JSON string (DuckDB's to_json(key))
  std::string value_json;  // JsonUnknownKeys::kKeysAndValues only: the value of the first member
                           // with this key, as JSON text (json_extract's)
};

// What Decode found in one text. Reused by the caller across rows (Decode clears it).
struct JsonRow {
  bool is_object = false;
  std::vector<JsonBadValue> bad_values;      // in column order
  std::vector<JsonUnknownKey> unknown_keys;  // in member order, repeated keys repeated
};

enum class JsonUnknownKeys : uint8_t {
  kIgnore,         // not reported
  kKeys,           // JsonUnknownKey::key and key_json
  kKeysAndValues,  // and value_json
};

struct JsonDecoderOptions {
  // Integer columns: NULL + JsonBadValue for JSON numbers that are not integers (see above).
  bool reject_fractional_integers = true;
  JsonUnknownKeys unknown_keys = JsonUnknownKeys::kIgnore;
  // Names of VARCHAR columns after the decoded ones, set with SetExtra.
  std::vector<std::string> extra_columns;
};

class JsonDecoder {
 public:
  // True when every column has a type Decode converts (see above), the names are non-empty and
  // distinct (case-insensitively, as DuckDB's struct fields), and there is at least one column.
  static bool Supports(const Schema& columns);

  // InvalidArgument when !Supports(columns).
  static Result<std::unique_ptr<JsonDecoder>> Make(Schema columns, JsonDecoderOptions options = {});

  ~JsonDecoder();
  JsonDecoder(const JsonDecoder&) = delete;
  JsonDecoder& operator=(const JsonDecoder&) = delete;

  // Decodes `text` into the columns of a new row and describes it in *row. InvalidArgument
  // (nothing appended) when `text` is not valid UTF-8 or a row is already in progress.
  [[nodiscard]] Status Decode(std::string_view text, JsonRow* row);
  // Sets extra column `i` of the row in progress (copied); nullopt is NULL. InvalidArgument
  // when no row is in progress, i is out of range, or the value is not valid UTF-8.
  [[nodiscard]] Status SetExtra(size_t i, std::optional<std::string_view> value);
  // Ends the row in progress (extra columns not set are NULL).
  [[nodiscard]] Status EndRow();

  int64_t num_rows() const;
  // The columns, then the extra columns (VARCHAR).
  const Schema& schema() const;

  // All ended rows; the decoder is then empty and may decode the next batch. InvalidArgument
  // when a row is in progress.
  Result<Batch> Finish();

  // The ended rows of every decoder, `decoders[0]`'s first, as one batch: the rows move into
  // it (no copy), and each decoder is then empty. For decoders that ran on separate threads over
  // consecutive parts of the input. InvalidArgument when the list is empty, a row is in
  // progress, or the schemas differ.
  static Result<Batch> FinishAll(std::span<JsonDecoder* const> decoders);

  // `value` as a JSON string, as DuckDB's to_json(value::VARCHAR) writes it. InvalidArgument when
  // `value` is not valid UTF-8.
  static Result<std::string> QuoteJsonString(std::string_view value);

 private:
  struct State;
  explicit JsonDecoder(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace sluice::engine
