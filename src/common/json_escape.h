// The one JSON string escaper: a string's bytes as the text between a JSON string's quotes, in
// the two styles the peers write (Spark/Jackson for to_json, Python's json.dumps for the Nexmark
// reference generator).
//
// - '"' and '\\' become \" and \\; \n \r \t \b \f their short escapes; every other byte below
//   0x20 becomes \u00XX (lower-case hex). '/' is never escaped (neither peer does).
// - JsonEscape::kMinimal writes every other byte as it is (UTF-8 text stays UTF-8; DEL too), as
//   Jackson does.
// - JsonEscape::kAscii also writes DEL and every byte >= 0x80 as \u00XX, so the output is
//   printable ASCII: Python's json.dumps (ensure_ascii) of an ASCII string. A byte >= 0x80 is
//   taken as the Latin-1 character of its value: UTF-8 text does not round-trip in this style
//   (callers that carry UTF-8 use kMinimal).
// A string with nothing to escape (the common case) is copied whole (SSE2 check where built with
// it). Pure functions; thread-safe. The caller owns every buffer.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sluice {

enum class JsonEscape { kMinimal, kAscii };

// The most bytes one input byte becomes (\u00XX).
inline constexpr size_t kMaxJsonEscapedBytesPerByte = 6;

// Writes `s` escaped, without quotes, at `out`, which has room for
// kMaxJsonEscapedBytesPerByte * s.size() bytes; returns the end of what was written.
char* WriteJsonEscaped(std::string_view s, JsonEscape style, char* out);

// Writes `s` as a quoted JSON string at `out`, which has room for
// 2 + kMaxJsonEscapedBytesPerByte * s.size() bytes; returns the end of what was written.
char* WriteJsonString(std::string_view s, JsonEscape style, char* out);

// Appends `s` as a quoted JSON string to *out.
void AppendJsonString(std::string_view s, JsonEscape style, std::string* out);

// `s` as a quoted JSON string.
std::string JsonQuoted(std::string_view s, JsonEscape style);

}  // namespace sluice
