#include "connect/batch_to_arrow.h"

#include <cctype>

#include "connect/spark_types.h"

namespace sluice::connect {

namespace {

Status BadText(std::string_view what, std::string_view text) {
  return Status::Internal("Spark Connect: cannot read the engine's " + std::string(what) +
                          " text '" + std::string(text) + "'");
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// Reads `n` digits (exactly) at *pos.
bool Digits(std::string_view text, size_t* pos, size_t n, int64_t* out) {
  if (*pos + n > text.size()) return false;
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = text[*pos + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

// YYYY-MM-DD (more year digits allowed, " (BC)" suffix for years before 1) at the start of
// `text`; *pos after it.
bool ParseDatePart(std::string_view text, size_t* pos, int64_t* days) {
  size_t p = 0;
  bool negative = false;
  if (p < text.size() && text[p] == '-') {
    negative = true;
    ++p;
  }
  size_t year_end = p;
  while (year_end < text.size() && std::isdigit(static_cast<unsigned char>(text[year_end]))) {
    ++year_end;
  }
  int64_t year, month, day;
  if (year_end - p < 4 || !Digits(text, &p, year_end - p, &year)) return false;
  if (p >= text.size() || text[p++] != '-' || !Digits(text, &p, 2, &month)) return false;
  if (p >= text.size() || text[p++] != '-' || !Digits(text, &p, 2, &day)) return false;
  if (month < 1 || month > 12 || day < 1 || day > 31) return false;
  constexpr std::string_view kBc = " (BC)";
  if (text.substr(p, kBc.size()) == kBc) {
    year = 1 - year;  // 1 BC is year 0
    p += kBc.size();
  }
  if (negative) year = -year;
  *days = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  *pos = p;
  return true;
}

Status AppendCell(const engine::Batch& batch, int64_t row, size_t col, const ArrowType& type,
                  ArrowColumnBuilder* out) {
  if (batch.IsNull(row, col)) {
    out->AppendNull();
    return Status::OK();
  }
  switch (type.id) {
    case ArrowTypeId::kNull:
      out->AppendNull();
      return Status::OK();
    case ArrowTypeId::kBool: {
      SLUICE_ASSIGN_OR_RETURN(std::optional<bool> v, batch.GetBool(row, col));
      out->AppendBool(*v);
      return Status::OK();
    }
    case ArrowTypeId::kInt8:
    case ArrowTypeId::kInt16:
    case ArrowTypeId::kInt32:
    case ArrowTypeId::kInt64: {
      SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> v, batch.GetInt64(row, col));
      out->AppendInt(*v);
      return Status::OK();
    }
    case ArrowTypeId::kFloat:
    case ArrowTypeId::kDouble: {
      SLUICE_ASSIGN_OR_RETURN(std::optional<double> v, batch.GetDouble(row, col));
      out->AppendDouble(*v);
      return Status::OK();
    }
    default:
      break;
  }
  std::optional<std::string> text = batch.GetString(row, col);
  switch (type.id) {
    case ArrowTypeId::kString:
      out->AppendBytes(*text);
      return Status::OK();
    case ArrowTypeId::kBinary: {
      SLUICE_ASSIGN_OR_RETURN(std::string bytes, ParseBlobText(*text));
      out->AppendBytes(bytes);
      return Status::OK();
    }
    case ArrowTypeId::kDate32: {
      SLUICE_ASSIGN_OR_RETURN(int32_t days, ParseDateDays(*text));
      out->AppendInt(days);
      return Status::OK();
    }
    case ArrowTypeId::kTimestampMicros: {
      SLUICE_ASSIGN_OR_RETURN(int64_t micros, ParseTimestampMicros(*text));
      out->AppendInt(micros);
      return Status::OK();
    }
    case ArrowTypeId::kDecimal128: {
      SLUICE_ASSIGN_OR_RETURN(__int128 v, ParseDecimalUnscaled(*text, type.scale));
      out->AppendDecimal(v);
      return Status::OK();
    }
    default:
      return Status::Internal("Spark Connect: no Arrow conversion for this column");
  }
}

}  // namespace

Result<int32_t> ParseDateDays(std::string_view text) {
  size_t pos = 0;
  int64_t days = 0;
  if (!ParseDatePart(text, &pos, &days) || pos != text.size()) return BadText("date", text);
  return static_cast<int32_t>(days);
}

Result<int64_t> ParseTimestampMicros(std::string_view text) {
  size_t p = 0;
  int64_t days = 0;
  if (!ParseDatePart(text, &p, &days)) return BadText("timestamp", text);
  // A year before 1 shows " (BC)" after the time: refused below as text that does not parse.
  int64_t h, m, s, micros = 0;
  if (p >= text.size() || text[p++] != ' ' || !Digits(text, &p, 2, &h)) {
    return BadText("timestamp", text);
  }
  if (p >= text.size() || text[p++] != ':' || !Digits(text, &p, 2, &m)) {
    return BadText("timestamp", text);
  }
  if (p >= text.size() || text[p++] != ':' || !Digits(text, &p, 2, &s)) {
    return BadText("timestamp", text);
  }
  if (p < text.size() && text[p] == '.') {
    ++p;
    size_t start = p;
    while (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p]))) ++p;
    size_t n = p - start;
    if (n == 0 || n > 6) return BadText("timestamp", text);
    int64_t frac = 0;
    size_t q = start;
    Digits(text, &q, n, &frac);
    for (size_t i = n; i < 6; ++i) frac *= 10;
    micros = frac;
  }
  std::string_view rest = text.substr(p);
  if (!rest.empty() && rest != "+00") return BadText("timestamp", text);
  return ((days * 24 + h) * 60 + m) * 60 * 1000000 + s * 1000000 + micros;
}

Result<__int128> ParseDecimalUnscaled(std::string_view text, int32_t scale) {
  size_t p = 0;
  bool negative = false;
  if (p < text.size() && (text[p] == '-' || text[p] == '+')) negative = text[p++] == '-';
  __int128 v = 0;
  bool any = false;
  int32_t frac_digits = -1;
  for (; p < text.size(); ++p) {
    char c = text[p];
    if (c == '.' && frac_digits < 0) {
      frac_digits = 0;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) return BadText("decimal", text);
    if (frac_digits >= 0) {
      if (frac_digits == scale) return BadText("decimal", text);  // more digits than the scale
      ++frac_digits;
    }
    v = v * 10 + (c - '0');
    any = true;
  }
  if (!any) return BadText("decimal", text);
  for (int32_t i = std::max(frac_digits, 0); i < scale; ++i) v *= 10;
  return negative ? -v : v;
}

Result<std::string> ParseBlobText(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      if (i + 3 >= text.size() || text[i + 1] != 'x') return BadText("blob", text);
      int v = 0;
      for (size_t k = i + 2; k < i + 4; ++k) {
        char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[k])));
        if (c >= '0' && c <= '9') {
          v = v * 16 + (c - '0');
        } else if (c >= 'a' && c <= 'f') {
          v = v * 16 + (c - 'a' + 10);
        } else {
          return BadText("blob", text);
        }
      }
      out.push_back(static_cast<char>(v));
      i += 3;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

Result<std::vector<ArrowField>> ArrowFieldsOf(const engine::Schema& schema) {
  std::vector<ArrowField> fields;
  for (const engine::Field& f : schema) {
    SLUICE_ASSIGN_OR_RETURN(ArrowType type, ArrowTypeOf(f.type, f.name));
    fields.push_back({f.name, type, f.nullable});
  }
  return fields;
}

Result<std::string> BatchToArrowStream(const engine::Batch& batch, int64_t offset, int64_t length,
                                       int64_t* num_rows) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<ArrowField> fields, ArrowFieldsOf(batch.schema()));
  int64_t begin = std::min(std::max<int64_t>(offset, 0), batch.num_rows());
  int64_t end = std::min(batch.num_rows(), begin + std::max<int64_t>(length, 0));
  std::vector<ArrowColumnBuilder> columns;
  for (const ArrowField& f : fields) columns.emplace_back(f.type);
  for (size_t c = 0; c < fields.size(); ++c) {
    for (int64_t r = begin; r < end; ++r) {
      Status st = AppendCell(batch, r, c, fields[c].type, &columns[c]);
      if (!st.ok()) {
        return Status::Internal(st.message() + " (column '" + fields[c].name + "', row " +
                                std::to_string(r) + ")");
      }
    }
  }
  *num_rows = end - begin;
  return ArrowStreamWriter::Stream(fields, columns, end - begin);
}

}  // namespace sluice::connect
