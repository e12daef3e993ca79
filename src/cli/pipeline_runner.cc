#include "cli/pipeline_runner.h"

#include <csignal>
#include <fstream>
#include <iomanip>
#include <map>
#include <mutex>
#include <ostream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "sql/session.h"
#include "sql/statement_splitter.h"
#include "sql/streaming_statement_parser.h"
#include "sql/table_catalog.h"
#include "stream/progress.h"

namespace sluice::cli {
namespace {

volatile std::sig_atomic_t g_stop_requested = 0;

extern "C" void HandleStopSignal(int) { g_stop_requested = 1; }

bool StopsByItself(const stream::Trigger& t) {
  return t.kind == stream::TriggerKind::kAvailableNow || t.kind == stream::TriggerKind::kOnce;
}

stream::Trigger TriggerOf(const sql::StreamingDefinition& def) {
  if (def.trigger) return *def.trigger;
  if (def.schedule_every_ms) {
    Result<stream::Trigger> t = stream::Trigger::ProcessingTime(*def.schedule_every_ms);
    if (t.ok()) return *t;
  }
  return stream::Trigger::Default();
}

struct Query {
  sql::StreamingDefinition def;
  stream::Trigger trigger;
  std::set<size_t> upstream;  // indexes of queries whose table this one reads
  std::string target_path;    // the Delta table it writes
  std::unique_ptr<stream::MicroBatchExecution> exec;
  bool started = false;
  bool finished = false;
};

std::string Key(const sql::StreamingDefinition& def) {
  return (def.kind == sql::StreamingDefinition::Kind::kFlow ? "flow:" : "table:") + def.name;
}

}  // namespace

int RunPipeline(const RunCommandOptions& options, std::ostream& out, std::ostream& err) {
  std::ifstream in(options.file);
  if (!in) {
    err << "Error: cannot read " << options.file << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  sql::SessionOptions session_options;
  session_options.warehouse = options.warehouse;
  Result<std::unique_ptr<sql::Session>> opened = sql::Session::Open(session_options);
  if (!opened.ok()) {
    err << "Error: " << opened.status().ToString() << "\n";
    return 1;
  }
  std::unique_ptr<sql::Session> session = std::move(opened).ValueOrDie();

  // 1. The file's statements, in order; remember the streaming tables and flows it defines.
  std::vector<std::string> defined;  // Key()s, in file order
  for (const sql::StatementText& st : sql::SplitStatements(text.str())) {
    Result<engine::Batch> r = session->Execute(st.text);
    if (!r.ok()) {
      err << "Error: " << options.file << ":" << st.line << ": " << r.status().ToString() << "\n";
      return 1;
    }
    Result<std::optional<sql::StreamingStatement>> parsed = sql::ParseStreamingStatement(st.text);
    if (parsed.ok() && parsed->has_value()) {
      if (const auto* c = std::get_if<sql::CreateStreamingTableStatement>(&**parsed)) {
        if (c->query) defined.push_back("table:" + sql::NormalizeTableName(c->name));
      } else if (const auto* f = std::get_if<sql::CreateFlowStatement>(&**parsed)) {
        defined.push_back("flow:" + sql::NormalizeTableName(f->name));
      }
    }
  }
  Result<std::vector<sql::StreamingDefinition>> defs = session->streaming().ListDefinitions();
  if (!defs.ok()) {
    err << "Error: " << defs.status().ToString() << "\n";
    return 1;
  }
  // A flow without a trigger of its own runs on its target table's (as flows follow their
  // table's refresh), so an AVAILABLE NOW table's flows stop by themselves too.
  auto trigger_for = [&](const sql::StreamingDefinition& def) {
    if (def.kind == sql::StreamingDefinition::Kind::kFlow && !def.trigger &&
        !def.schedule_every_ms) {
      for (const auto& other : *defs) {
        if (other.kind != sql::StreamingDefinition::Kind::kFlow &&
            sql::NormalizeTableName(other.name) == sql::NormalizeTableName(def.target)) {
          return TriggerOf(other);
        }
      }
    }
    return TriggerOf(def);
  };
  std::vector<Query> queries;
  for (const std::string& key : defined) {
    for (const auto& def : *defs) {
      if (Key(def) == key)
        queries.push_back({def, trigger_for(def), {}, "", nullptr, false, false});
    }
  }
  if (queries.empty()) {
    out << "no streaming tables or flows in " << options.file << "\n";
    return 0;
  }
  // 2. Dependencies: a query reads the table (path) another one writes.
  const std::string warehouse = session->warehouse();
  sql::TableCatalog tables(fs::LocalFileSystem(), warehouse);
  std::map<std::string, std::vector<size_t>> writers;  // table path -> queries writing it
  for (size_t i = 0; i < queries.size(); ++i) {
    Result<std::string> path = tables.Resolve(sql::TableName{queries[i].def.target, false});
    if (path.ok()) {
      writers[*path].push_back(i);
      queries[i].target_path = *path;
    }
  }
  for (size_t i = 0; i < queries.size(); ++i) {
    for (const auto& src : queries[i].def.sources) {
      auto p = src.options.find("path");
      if ((src.format != "delta" && src.format != "delta_cdf") || p == src.options.end()) continue;
      auto w = writers.find(p->second);
      if (w == writers.end()) continue;
      for (size_t j : w->second) {
        if (j != i) queries[i].upstream.insert(j);
      }
    }
  }

  // 3. Run.
  std::ofstream progress_log;
  if (!options.progress_log.empty()) {
    progress_log.open(options.progress_log, std::ios::app);
    if (!progress_log) {
      err << "Error: cannot open the progress log " << options.progress_log << " for appending\n";
      return 1;
    }
  }
  std::mutex out_mu;
  sql::StartOptions start;
  start.on_progress = [&out, &out_mu, &progress_log](const std::string& name,
                                                     const stream::StreamingQueryProgress& p) {
    std::lock_guard<std::mutex> lock(out_mu);
    if (progress_log.is_open()) progress_log << stream::ProgressToJson(p) << std::endl;
    out << std::left << std::setw(20) << name << " batch " << std::setw(5) << p.batch_id << " "
        << std::right << std::setw(9) << p.NumInputRows() << " rows " << std::setw(12) << std::fixed
        << std::setprecision(1) << p.ProcessedRowsPerSecond() << " rows/s " << std::setw(7)
        << p.batch_duration << " ms" << std::endl;
  };
  g_stop_requested = 0;
  auto old_int = std::signal(SIGINT, HandleStopSignal);
  auto old_term = std::signal(SIGTERM, HandleStopSignal);
  int exit_code = 0;
  std::string error;
  for (;;) {
    if (g_stop_requested) break;
    // Start what can start.
    for (size_t i = 0; i < queries.size() && error.empty(); ++i) {
      Query& q = queries[i];
      if (q.started) continue;
      bool ready = true;
      for (size_t j : q.upstream) {
        const Query& u = queries[j];
        // A running upstream counts once its first batch has created its table.
        Result<bool> created =
            fs::LocalFileSystem()->Exists(fs::JoinPath(u.target_path, "_delta_log"));
        ready = ready && (u.finished ||
                          (u.started && !StopsByItself(u.trigger) && created.ok() && *created));
      }
      if (!ready) continue;
      Result<std::unique_ptr<stream::MicroBatchExecution>> exec =
          session->streaming().Start(q.def, q.trigger, start);
      if (!exec.ok()) {
        error = q.def.name + ": " + exec.status().ToString();
        break;
      }
      q.exec = std::move(exec).ValueOrDie();
      q.started = true;
      std::lock_guard<std::mutex> lock(out_mu);
      out << "started " << q.def.name << " (" << q.trigger.ToString() << ")" << std::endl;
    }
    if (!error.empty()) break;
    // Reap what ended.
    bool all_done = true;
    for (Query& q : queries) {
      if (q.started && !q.finished && !q.exec->IsActive()) {
        q.finished = true;
        if (std::optional<Status> ex = q.exec->Exception()) {
          error = ex->ToString();
        } else {
          std::lock_guard<std::mutex> lock(out_mu);
          out << "finished " << q.def.name << std::endl;
        }
      }
      all_done = all_done && q.finished;
    }
    if (!error.empty() || all_done) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Stop everything at a batch boundary.
  for (Query& q : queries) {
    if (q.exec) (void)q.exec->Stop();
  }
  for (Query& q : queries) {
    if (error.empty() && q.exec && q.exec->Exception()) error = q.exec->Exception()->ToString();
  }
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  if (!error.empty()) {
    err << "Error: " << error << "\n";
    exit_code = 1;
  } else if (g_stop_requested) {
    out << "stopped" << std::endl;
  }
  return exit_code;
}

}  // namespace sluice::cli
