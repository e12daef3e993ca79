// Small text helpers shared by every layer that builds SQL text (engine, delta, sources, plan,
// ops, sinks, stream, sql, cli): the one SQL literal and identifier quoters. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

// ASCII lower case (non-ASCII bytes unchanged).
std::string AsciiLower(std::string_view s);

// Whether `a` and `b` are equal ignoring ASCII case (non-ASCII bytes compared as they are).
bool AsciiEqualsIgnoreCase(std::string_view a, std::string_view b);

// `name` as a double-quoted SQL identifier, embedded quotes doubled: a"b -> "a""b".
std::string QuoteIdentifier(std::string_view name);

// `text` as a SQL string literal: in single quotes, each ' doubled.
std::string QuoteLiteral(std::string_view text);

}  // namespace sluice
