#include "common/json_escape.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sluice {
namespace {

// Bytes that are copied as they are in every style: printable ASCII other than '"' and '\\'.
bool IsPlainByte(unsigned char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; }

// True when every byte of s is IsPlainByte (a string of them is the same in every style).
#if defined(__SSE2__)
bool IsPlain16(__m128i x) {
  const __m128i space = _mm_set1_epi8(0x20);
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i del = _mm_set1_epi8(0x7F);
  // Signed compare: bytes >= 0x80 are negative, so they count as "< space" too.
  const __m128i bad =
      _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(x, space), _mm_cmpeq_epi8(x, quote)),
                   _mm_or_si128(_mm_cmpeq_epi8(x, backslash), _mm_cmpeq_epi8(x, del)));
  return _mm_movemask_epi8(bad) == 0;
}

bool IsPlain(std::string_view s) {
  const char* data = s.data();
  const size_t n = s.size();
  if (n < 16) {  // pad with a plain byte: never read past the string
    char buf[16];
    std::memset(buf, 'a', sizeof(buf));
    if (n != 0) std::memcpy(buf, data, n);
    return IsPlain16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(buf)));
  }
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    if (!IsPlain16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i)))) return false;
  }
  // The last 16 bytes, overlapping the checked ones.
  return i == n || IsPlain16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + n - 16)));
}
#else
bool IsPlain(std::string_view s) {
  for (const char ch : s) {
    if (!IsPlainByte(static_cast<unsigned char>(ch))) return false;
  }
  return true;
}
#endif

char* WriteEscapedSlow(std::string_view s, JsonEscape style, char* p) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (IsPlainByte(c) || (c >= 0x7F && style == JsonEscape::kMinimal)) {
      *p++ = ch;
      continue;
    }
    *p++ = '\\';
    switch (c) {
      case '"':
        *p++ = '"';
        break;
      case '\\':
        *p++ = '\\';
        break;
      case '\n':
        *p++ = 'n';
        break;
      case '\r':
        *p++ = 'r';
        break;
      case '\t':
        *p++ = 't';
        break;
      case '\b':
        *p++ = 'b';
        break;
      case '\f':
        *p++ = 'f';
        break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        *p++ = 'u';
        *p++ = '0';
        *p++ = '0';
        *p++ = kHex[c >> 4];
        *p++ = kHex[c & 15];
      }
    }
  }
  return p;
}

}  // namespace

char* WriteJsonEscaped(std::string_view s, JsonEscape style, char* out) {
  if (!IsPlain(s)) return WriteEscapedSlow(s, style, out);
  if (!s.empty()) std::memcpy(out, s.data(), s.size());
  return out + s.size();
}

char* WriteJsonString(std::string_view s, JsonEscape style, char* out) {
  *out++ = '"';
  out = WriteJsonEscaped(s, style, out);
  *out++ = '"';
  return out;
}

void AppendJsonString(std::string_view s, JsonEscape style, std::string* out) {
  *out += '"';
  if (IsPlain(s)) {
    *out += s;
  } else {
    const size_t old_size = out->size();
    out->resize(old_size + kMaxJsonEscapedBytesPerByte * s.size());
    const char* end = WriteEscapedSlow(s, style, out->data() + old_size);
    out->resize(static_cast<size_t>(end - out->data()));
  }
  *out += '"';
}

std::string JsonQuoted(std::string_view s, JsonEscape style) {
  std::string out;
  AppendJsonString(s, style, &out);
  return out;
}

}  // namespace sluice
