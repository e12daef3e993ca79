// The XML reader of S3's replies (docs/s3.md): ListObjectsV2 results, error documents,
// InitiateMultipartUpload results. Only what those need: elements, their text (with CDATA, the
// five predefined entities and character references decoded), the XML declaration and comments
// skipped. Attributes are parsed and dropped; DOCTYPE and processing instructions inside the
// document are refused (S3 sends neither). Nesting deeper than 64 is refused.
//
// Malformed input is a Corruption error naming the byte offset and what was expected. Pure;
// thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace sluice::fs {

struct XmlElement {
  std::string name;  // as written, prefix included ("ListBucketResult", "s3:Key")
  std::string text;  // the element's own character data, decoded, concatenated
  std::vector<XmlElement> children;

  // The first child named `name`, or null.
  const XmlElement* Child(std::string_view name) const;
  // The text of the first child named `name`, or "" when there is none.
  std::string ChildText(std::string_view name) const;
  // Every child named `name`, in document order.
  std::vector<const XmlElement*> Children(std::string_view name) const;
};

// Parses one document (its root element).
Result<XmlElement> ParseXml(std::string_view document);

}  // namespace sluice::fs
