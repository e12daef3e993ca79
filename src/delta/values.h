// Delta's text encodings of values: partition values in the log, stats min/max, and filter
// literals, turned into SQL literals and into comparable values.
//
// Partition values (PROTOCOL.md "Partition Value Serialization"): null or "" is NULL; numbers
// as decimal text; date YYYY-MM-DD; timestamp either "YYYY-MM-DD HH:MM:SS[.ffffff]" (read as
// UTC) or ISO-8601 "YYYY-MM-DDTHH:MM:SS[.ffffff]Z" (or with an offset); boolean true/false;
// binary as the raw characters; strings as is (the literal "null" stays a string).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "common/result.h"
#include "engine/types.h"

namespace sluice::delta {

// Microseconds since the epoch (UTC) of a Delta timestamp text; InvalidArgument if malformed.
Result<int64_t> ParseTimestampMicros(std::string_view text);
// Days since the epoch of YYYY-MM-DD; InvalidArgument if malformed.
Result<int32_t> ParseDateDays(std::string_view text);
// "YYYY-MM-DD HH:MM:SS.ffffff+00" for DuckDB's TIMESTAMPTZ.
std::string FormatTimestampMicros(int64_t micros);
// "2018-10-24T21:14:18.000Z": epoch milliseconds as ISO-8601 UTC (for messages).
std::string FormatMillisIso(int64_t millis);

// A SQL expression of type `type` for a partition value from the log, e.g.
// CAST('2021-09-08 11:11:11.000000+00' AS TIMESTAMPTZ) or CAST(NULL AS INTEGER).
// InvalidArgument (naming the value) when the text does not parse as the type.
Result<std::string> PartitionValueSql(const std::optional<std::string>& value,
                                      const engine::DataType& type);

// A value that orders like the column type, for data skipping. monostate = cannot compare.
using Comparable = std::variant<std::monostate, long double, std::string, int64_t, bool>;

// Parses `text` (a partition value, a filter literal, or a stats value rendered as text) as a
// comparable of `type`: numbers (integers, floats, decimals) -> long double, strings -> bytes,
// date -> days, timestamp(_ntz) -> micros, boolean -> bool. Other types -> monostate.
Result<Comparable> ParseComparable(std::string_view text, const engine::DataType& type);

// -1/0/1, or nullopt when the two are not of the same comparable kind.
std::optional<int> CompareValues(const Comparable& a, const Comparable& b);

}  // namespace sluice::delta
