// Small helpers around nlohmann::json for the stream layer's formats. Header-only.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace sluice::stream {

// Compact JSON text. Never throws: invalid UTF-8 in strings is replaced by U+FFFD instead of
// raising nlohmann's type_error 316.
template <typename Json>
std::string DumpJson(const Json& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

// Parses `text` as one JSON value without throwing; a discarded value means invalid JSON.
inline nlohmann::ordered_json ParseJsonNoThrow(std::string_view text) {
  return nlohmann::ordered_json::parse(text.begin(), text.end(), nullptr,
                                       /*allow_exceptions=*/false);
}

// Runs `parse` (returning Result<T>) and turns any nlohmann exception that escapes it into
// Corruption("<what>: <exception text>"): the parse boundary of every format in this layer. The
// parsers check types before every access, so this is a safety net, not the normal path.
template <typename F>
auto CatchJsonExceptions(std::string_view what, F&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(std::string(what) + ": " + e.what());
  }
}

}  // namespace sluice::stream
