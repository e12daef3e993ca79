// ConsoleSink: prints every batch, for demos (Spark's console sink). At-least-once: a re-run
// batch is printed again. Output per batch, as Spark's:
//
//   -------------------------------------------
//   Batch: 3
//   -------------------------------------------
//   +---+-----+
//   |  k|value|
//   +---+-----+
//   |  1|    a|
//   +---+-----+
//   only showing top 20 rows      (only when there are more; then no empty line follows)
//   <empty line>                  (only when all rows were shown)
//
// ShowString is Spark 4's Dataset.showString: the table text, ending in "\n" after the last
// border, or in "only showing top N rows" with no newline (Spark 4.2, asked directly).
// Cells as Dataset.show: NULL as "NULL"; with truncate, cells longer than 20 characters are cut
// to 17 + "..." and right-aligned; without, left-aligned and whole. Column width >= 3.
//
// Thread safety: driven by one query thread; the stream must outlive the sink.
#pragma once

#include <cstdint>
#include <iostream>
#include <ostream>
#include <string>

#include "sinks/sink.h"

namespace sluice::sinks {

struct ConsoleSinkOptions {
  int64_t num_rows = 20;  // numRows: rows shown per batch
  bool truncate = true;   // truncate: cut long cells to 20 characters
};

class ConsoleSink final : public Sink {
 public:
  explicit ConsoleSink(ConsoleSinkOptions options = {}, std::ostream* out = &std::cout)
      : options_(options), out_(out) {}

  std::string Description() const override { return "ConsoleSink"; }
  Status AddBatch(BatchId batch_id, const engine::Batch& data, OutputMode mode) override;
  std::optional<int64_t> LastNumOutputRows() const override { return last_rows_; }

 private:
  ConsoleSinkOptions options_;
  std::ostream* out_;
  std::optional<int64_t> last_rows_;
};

// Dataset.show's table text for `data` (what ConsoleSink prints after the header).
std::string ShowString(const engine::Batch& data, int64_t num_rows, bool truncate);

}  // namespace sluice::sinks
