// A Delta column's comment: the "comment" key of its field metadata, where Spark stores a
// column's COMMENT (StructField.getComment). The one reader for the DESCRIBE of delta/describe.cc
// and SQL's DESCRIBE TABLE (sql/table_statement_executor.cc).
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "delta/schema.h"

namespace sluice::delta {

// The comment of a field's metadata object; nullopt when it has none, or when the metadata is
// not an object or its "comment" not a string (Spark reads it with getString).
inline std::optional<std::string> FieldComment(const nlohmann::json& field_metadata) {
  if (!field_metadata.is_object()) return std::nullopt;
  auto it = field_metadata.find("comment");
  if (it == field_metadata.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// The comment of the field at `path` ("a", "a.b") of a parsed schema's field metadata.
inline std::optional<std::string> FieldComment(const FieldMetadata& metadata,
                                               const std::string& path) {
  auto it = metadata.find(path);
  if (it == metadata.end()) return std::nullopt;
  return FieldComment(nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false));
}

}  // namespace sluice::delta
