// `sluice run pipeline.sql`: runs the statements of a pipeline file, then every streaming table
// and flow the file defines, each on its own trigger, until they all stop (AVAILABLE NOW and ONCE
// queries stop when done; the others run until interrupted) or one fails.
//
// Order: a query that reads another query's table (STREAM t / table_changes on it) starts after
// that query: after it has finished when it runs AVAILABLE NOW or ONCE (so that it sees all its
// output), else once it is running and its first batch has created its table. Triggers: the
// table's TRIGGER; SCHEDULE EVERY n without a TRIGGER is TRIGGER PROCESSING TIME n; neither is
// the default trigger (a batch as soon as data arrives). One line per batch: name, batch id, input
// rows, rows/s, duration. With a progress log, every batch's StreamingQueryProgress JSON (Spark's
// field names, one compact object per line) is appended to that file and flushed. SIGINT/SIGTERM
// stop every query at a batch boundary; the exit code is then 0. Errors: exit code 1 and
// "Error: <message>" on `err`.
#pragma once

#include <iosfwd>
#include <string>

namespace sluice::cli {

struct RunCommandOptions {
  std::string file;  // the pipeline's SQL
  std::string warehouse = "warehouse";
  std::string progress_log;  // empty: none
};

// Installs the SIGINT/SIGTERM handlers, runs, restores them. Returns the exit code.
int RunPipeline(const RunCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace sluice::cli
