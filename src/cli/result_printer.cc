#include "cli/result_printer.h"

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sluice::cli {
namespace {

// Display width of a UTF-8 string: counts code points, not bytes.
size_t DisplayWidth(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string CsvField(const std::optional<std::string>& v) {
  if (!v) return "";
  bool quote = v->empty() || v->find_first_of(",\"\r\n") != std::string::npos;
  if (!quote) return *v;
  std::string out = "\"";
  for (char c : *v) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

void PrintTable(const engine::Batch& batch, std::ostream& out) {
  size_t cols = batch.num_columns();
  if (cols == 0) return;
  std::vector<std::vector<std::string>> cells(static_cast<size_t>(batch.num_rows()));
  std::vector<size_t> width(cols);
  std::vector<bool> right(cols);
  for (size_t c = 0; c < cols; ++c) {
    width[c] = DisplayWidth(batch.schema()[c].name);
    right[c] = engine::IsNumeric(batch.schema()[c].type.id);
  }
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    auto& row = cells[static_cast<size_t>(r)];
    row.reserve(cols);
    for (size_t c = 0; c < cols; ++c) {
      std::optional<std::string> v = batch.GetString(r, c);
      row.push_back(v ? *v : "NULL");
      width[c] = std::max(width[c], DisplayWidth(row.back()));
    }
  }
  auto cell = [&](const std::string& text, size_t c) {
    std::string pad(width[c] - DisplayWidth(text), ' ');
    return right[c] ? pad + text : text + pad;
  };
  std::string line;
  for (size_t c = 0; c < cols; ++c) {
    if (c) line += " | ";
    line += cell(batch.schema()[c].name, c);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  out << line << '\n';
  line.clear();
  for (size_t c = 0; c < cols; ++c) {
    if (c) line += "-+-";
    line += std::string(width[c], '-');
  }
  out << line << '\n';
  for (const auto& row : cells) {
    line.clear();
    for (size_t c = 0; c < cols; ++c) {
      if (c) line += " | ";
      line += cell(row[c], c);
    }
    // Trailing padding of the last column is noise.
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
  out << "(" << batch.num_rows() << (batch.num_rows() == 1 ? " row)" : " rows)") << '\n';
}

void PrintCsv(const engine::Batch& batch, std::ostream& out) {
  size_t cols = batch.num_columns();
  if (cols == 0) return;
  for (size_t c = 0; c < cols; ++c) {
    if (c) out << ',';
    out << CsvField(batch.schema()[c].name);
  }
  out << "\r\n";
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    for (size_t c = 0; c < cols; ++c) {
      if (c) out << ',';
      out << CsvField(batch.GetString(r, c));
    }
    out << "\r\n";
  }
}

void PrintJson(const engine::Batch& batch, std::ostream& out) {
  size_t cols = batch.num_columns();
  if (cols == 0) return;
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    nlohmann::ordered_json row = nlohmann::ordered_json::object();
    for (size_t c = 0; c < cols; ++c) {
      const engine::Field& field = batch.schema()[c];
      std::optional<std::string> v = batch.GetString(r, c);
      nlohmann::ordered_json value;
      if (!v) {
        value = nullptr;
      } else if (field.type.id == engine::TypeId::kBoolean) {
        value = (*v == "true");
      } else if (engine::IsNumeric(field.type.id)) {
        // DuckDB renders inf/nan as text that JSON cannot hold as a number.
        nlohmann::ordered_json parsed =
            nlohmann::ordered_json::parse(*v, nullptr, /*allow_exceptions=*/false);
        value = parsed.is_number() ? parsed : nlohmann::ordered_json(*v);
      } else {
        value = *v;
      }
      row[field.name] = std::move(value);
    }
    out << row.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
  }
}

}  // namespace

Result<OutputFormat> ParseOutputFormat(std::string_view text) {
  if (text == "table") return OutputFormat::kTable;
  if (text == "csv") return OutputFormat::kCsv;
  if (text == "json") return OutputFormat::kJson;
  return Status::InvalidArgument("unknown output format '" + std::string(text) +
                                 "' (use table, csv or json)");
}

void PrintBatch(const engine::Batch& batch, OutputFormat format, std::ostream& out) {
  switch (format) {
    case OutputFormat::kTable:
      PrintTable(batch, out);
      break;
    case OutputFormat::kCsv:
      PrintCsv(batch, out);
      break;
    case OutputFormat::kJson:
      PrintJson(batch, out);
      break;
  }
}

}  // namespace sluice::cli
