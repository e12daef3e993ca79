#include "sinks/console_sink.h"

#include <algorithm>
#include <vector>

namespace sluice::sinks {
namespace {

// Display width: UTF-8 code points (continuation bytes do not count).
size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string Pad(const std::string& s, size_t width, bool left_pad) {
  size_t w = Width(s);
  if (w >= width) return s;
  std::string fill(width - w, ' ');
  return left_pad ? fill + s : s + fill;
}

}  // namespace

std::string ShowString(const engine::Batch& data, int64_t num_rows, bool truncate) {
  const size_t ncols = data.num_columns();
  const int64_t shown = std::min<int64_t>(std::max<int64_t>(num_rows, 0), data.num_rows());
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header;
  for (const auto& f : data.schema()) header.push_back(f.name);
  rows.push_back(header);
  for (int64_t r = 0; r < shown; ++r) {
    std::vector<std::string> row;
    for (size_t c = 0; c < ncols; ++c) {
      std::string cell = data.GetString(r, c).value_or("NULL");
      if (truncate && Width(cell) > 20) cell = cell.substr(0, 17) + "...";
      row.push_back(std::move(cell));
    }
    rows.push_back(std::move(row));
  }
  std::vector<size_t> widths(ncols, 3);
  for (const auto& row : rows) {
    for (size_t c = 0; c < ncols; ++c) widths[c] = std::max(widths[c], Width(row[c]));
  }
  std::string sep = "+";
  for (size_t c = 0; c < ncols; ++c) sep += std::string(widths[c], '-') + "+";
  sep += "\n";
  std::string out = sep;
  for (size_t i = 0; i < rows.size(); ++i) {
    out += "|";
    for (size_t c = 0; c < ncols; ++c) out += Pad(rows[i][c], widths[c], truncate) + "|";
    out += "\n";
    if (i == 0) out += sep;
  }
  out += sep;
  if (data.num_rows() > shown) {
    // Spark 4's showString ends this line without a newline (println adds one).
    out += "only showing top " + std::to_string(shown) + (shown == 1 ? " row" : " rows");
  }
  return out;
}

Status ConsoleSink::AddBatch(BatchId batch_id, const engine::Batch& data, OutputMode mode) {
  (void)mode;
  std::string text = "-------------------------------------------\nBatch: " + batch_id.ToString() +
                     "\n-------------------------------------------\n" +
                     ShowString(data, options_.num_rows, options_.truncate) + "\n";
  (*out_) << text;
  out_->flush();
  if (!out_->good()) return Status::IOError("console sink: writing batch " + batch_id.ToString());
  last_rows_ = data.num_rows();
  return Status::OK();
}

}  // namespace sluice::sinks
