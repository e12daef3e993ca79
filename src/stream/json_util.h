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

// Parses `text` as one JSON value without throwing; a discarded value means invalid JSON. Text
// holding a NUL byte is invalid: JSON never holds a raw one, and nlohmann's lexer takes it for
// the end of its input, so "{...}\0<anything>" would parse as "{...}" (issue 24: found by the
// checkpoint_log fuzz target in offsets/<N>; the other formats read here had the same gap).
inline nlohmann::ordered_json ParseJsonNoThrow(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) {
    return nlohmann::ordered_json(nlohmann::ordered_json::value_t::discarded);
  }
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
