// Small text helpers shared by every layer that builds SQL text (engine, delta, sources, plan,
// ops, sinks, stream, sql, cli): the one SQL literal and identifier quoters. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// ASCII lower case (non-ASCII bytes unchanged).
std::string AsciiLower(std::string_view s);
// ASCII upper case (non-ASCII bytes unchanged).
std::string AsciiUpper(std::string_view s);

// Whether `a` and `b` are equal ignoring ASCII case (non-ASCII bytes compared as they are).
bool AsciiEqualsIgnoreCase(std::string_view a, std::string_view b);

// `name` as a double-quoted SQL identifier, embedded quotes doubled: a"b -> "a""b".
std::string QuoteIdentifier(std::string_view name);

// `text` as a SQL string literal: in single quotes, each ' doubled.
std::string QuoteLiteral(std::string_view text);

// `s` without its leading and trailing ASCII white space (space, \t, \n, \v, \f, \r).
std::string Trim(std::string_view s);

// The one reading of a boolean option: "true" or "false" in any ASCII case, white space around
// ignored; nullopt for anything else (the caller refuses it, naming the option).
std::optional<bool> ParseBoolText(std::string_view s);

// `items` with `separator` between them: Join({"a", "b"}, ", ") -> "a, b"; {} -> "".
std::string Join(const std::vector<std::string>& items, std::string_view separator);

}  // namespace sluice
