#include "fs/s3_xml.h"

#include <cstdint>
#include <string>

namespace sluice::fs {

const XmlElement* XmlElement::Child(std::string_view child_name) const {
  for (const XmlElement& c : children) {
    if (c.name == child_name) return &c;
  }
  return nullptr;
}

std::string XmlElement::ChildText(std::string_view child_name) const {
  const XmlElement* c = Child(child_name);
  return c == nullptr ? std::string() : c->text;
}

std::vector<const XmlElement*> XmlElement::Children(std::string_view child_name) const {
  std::vector<const XmlElement*> out;
  for (const XmlElement& c : children) {
    if (c.name == child_name) out.push_back(&c);
  }
  return out;
}

namespace {

constexpr int kMaxDepth = 64;

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.' || c == ':' || static_cast<unsigned char>(c) >= 0x80;
}
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Parser {
 public:
  explicit Parser(std::string_view doc) : doc_(doc) {}

  Result<XmlElement> Document() {
    if (doc_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
    SLUICE_RETURN_NOT_OK(SkipMisc(/*allow_declaration=*/true));
    if (AtEnd()) return Error("expected the root element, found the end of the input");
    if (doc_[pos_] != '<') return Error("expected '<' of the root element");
    XmlElement root;
    SLUICE_RETURN_NOT_OK(Element(&root, 1));
    SLUICE_RETURN_NOT_OK(SkipMisc(/*allow_declaration=*/false));
    if (!AtEnd()) return Error("unexpected content after the root element");
    return root;
  }

 private:
  bool AtEnd() const { return pos_ >= doc_.size(); }
  bool StartsWith(std::string_view s) const { return doc_.substr(pos_, s.size()) == s; }
  Status Error(std::string_view what) const {
    return Status::Corruption("malformed XML at byte " + std::to_string(pos_) + ": " +
                              std::string(what));
  }
  void SkipSpace() {
    while (!AtEnd() && IsSpace(doc_[pos_])) ++pos_;
  }

  // Whitespace, comments and (before the root only) the XML declaration.
  Status SkipMisc(bool allow_declaration) {
    while (true) {
      SkipSpace();
      if (StartsWith("<?xml") && allow_declaration && pos_ <= 3) {
        size_t end = doc_.find("?>", pos_);
        if (end == std::string_view::npos) return Error("unterminated XML declaration");
        pos_ = end + 2;
      } else if (StartsWith("<!--")) {
        SLUICE_RETURN_NOT_OK(Comment());
      } else if (StartsWith("<!") || StartsWith("<?")) {
        return Error("DOCTYPE and processing instructions are not supported");
      } else {
        return Status::OK();
      }
    }
  }

  Status Comment() {
    size_t end = doc_.find("-->", pos_ + 4);
    if (end == std::string_view::npos) return Error("unterminated comment");
    pos_ = end + 3;
    return Status::OK();
  }

  Result<std::string> Name() {
    size_t start = pos_;
    while (!AtEnd() && IsNameChar(doc_[pos_])) ++pos_;
    if (pos_ == start) return Error("expected a name");
    return std::string(doc_.substr(start, pos_ - start));
  }

  Status Reference(std::string* out) {
    size_t end = doc_.find(';', pos_);
    if (end == std::string_view::npos || end - pos_ > 12)
      return Error("unterminated '&' reference");
    std::string_view ref = doc_.substr(pos_ + 1, end - pos_ - 1);
    if (ref == "amp") {
      *out += '&';
    } else if (ref == "lt") {
      *out += '<';
    } else if (ref == "gt") {
      *out += '>';
    } else if (ref == "quot") {
      *out += '"';
    } else if (ref == "apos") {
      *out += '\'';
    } else if (ref.size() >= 2 && ref[0] == '#') {
      bool hex = ref[1] == 'x';
      std::string_view digits = ref.substr(hex ? 2 : 1);
      if (digits.empty()) return Error("empty character reference");
      uint32_t cp = 0;
      for (char c : digits) {
        int d;
        if (c >= '0' && c <= '9') {
          d = c - '0';
        } else if (hex && c >= 'a' && c <= 'f') {
          d = c - 'a' + 10;
        } else if (hex && c >= 'A' && c <= 'F') {
          d = c - 'A' + 10;
        } else {
          return Error("bad digit in character reference &" + std::string(ref) + ";");
        }
        cp = cp * (hex ? 16 : 10) + static_cast<uint32_t>(d);
        if (cp > 0x10FFFF) return Error("character reference out of range");
      }
      if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)) return Error("invalid character reference");
      AppendUtf8(out, cp);
    } else {
      return Error("unknown entity &" + std::string(ref) + ";");
    }
    pos_ = end + 1;
    return Status::OK();
  }

  // Attributes up to '>' or "/>"; their values are checked for quoting and dropped.
  Status Attributes() {
    while (true) {
      SkipSpace();
      if (AtEnd()) return Error("unterminated start tag");
      if (doc_[pos_] == '>' || StartsWith("/>")) return Status::OK();
      SLUICE_ASSIGN_OR_RETURN(std::string name, Name());
      SkipSpace();
      if (AtEnd() || doc_[pos_] != '=') return Error("expected '=' after attribute " + name);
      ++pos_;
      SkipSpace();
      if (AtEnd() || (doc_[pos_] != '"' && doc_[pos_] != '\'')) {
        return Error("expected a quoted value of attribute " + name);
      }
      char quote = doc_[pos_++];
      size_t end = doc_.find(quote, pos_);
      if (end == std::string_view::npos) return Error("unterminated value of attribute " + name);
      if (doc_.substr(pos_, end - pos_).find('<') != std::string_view::npos) {
        return Error("'<' in the value of attribute " + name);
      }
      pos_ = end + 1;
    }
  }

  Status Element(XmlElement* element, int depth) {
    if (depth > kMaxDepth) return Error("elements nested deeper than 64");
    ++pos_;  // '<'
    SLUICE_ASSIGN_OR_RETURN(element->name, Name());
    SLUICE_RETURN_NOT_OK(Attributes());
    if (StartsWith("/>")) {
      pos_ += 2;
      return Status::OK();
    }
    ++pos_;  // '>'
    while (true) {
      if (AtEnd()) return Error("unterminated element <" + element->name + ">");
      char c = doc_[pos_];
      if (c == '&') {
        SLUICE_RETURN_NOT_OK(Reference(&element->text));
      } else if (c != '<') {
        element->text += c;
        ++pos_;
      } else if (StartsWith("</")) {
        pos_ += 2;
        SLUICE_ASSIGN_OR_RETURN(std::string name, Name());
        if (name != element->name) {
          return Error("end tag </" + name + "> does not match <" + element->name + ">");
        }
        SkipSpace();
        if (AtEnd() || doc_[pos_] != '>') return Error("expected '>' of </" + name + ">");
        ++pos_;
        return Status::OK();
      } else if (StartsWith("<![CDATA[")) {
        size_t end = doc_.find("]]>", pos_ + 9);
        if (end == std::string_view::npos) return Error("unterminated CDATA section");
        element->text.append(doc_.substr(pos_ + 9, end - pos_ - 9));
        pos_ = end + 3;
      } else if (StartsWith("<!--")) {
        SLUICE_RETURN_NOT_OK(Comment());
      } else if (StartsWith("<!") || StartsWith("<?")) {
        return Error("DOCTYPE and processing instructions are not supported");
      } else {
        element->children.emplace_back();
        SLUICE_RETURN_NOT_OK(Element(&element->children.back(), depth + 1));
      }
    }
  }

  std::string_view doc_;
  size_t pos_ = 0;
};

}  // namespace

Result<XmlElement> ParseXml(std::string_view document) { return Parser(document).Document(); }

}  // namespace sluice::fs
