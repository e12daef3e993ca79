#include "cli/pipeline_runner.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
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

#include "cli/restart_policy.h"
#include "cli/status_line.h"
#include "server/monitor_server.h"
#include "sinks/kafka_record_writer.h"
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
  std::unique_ptr<stream::MicroBatchExecution> exec;  // null while waiting for a restart
  bool started = false;
  bool finished = false;
  // Supervision: when the current run started, when the next restart is due, the budget.
  int64_t started_ms = 0;
  std::optional<int64_t> restart_at_ms;
  RestartTracker tracker{RestartPolicy{}};
};

int64_t MonoMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The terminal's width in columns, 0 when unknown.
size_t TerminalWidth() {
  struct winsize ws {};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) return ws.ws_col;
  return 0;
}

// Tells the monitoring server that the query ended, with its error if it failed.
void ReportEnd(server::MonitorServer& ui, const stream::MicroBatchExecution& exec) {
  std::optional<Status> ex = exec.Exception();
  ui.QueryTerminated(exec.id(), exec.run_id(),
                     ex ? std::optional<std::string>(ex->ToString()) : std::nullopt);
}

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
  // A flow without a trigger of its own runs on its target table's or sink's (as flows follow
  // their table's refresh), so an AVAILABLE NOW table's flows stop by themselves too.
  auto trigger_for = [&](const sql::StreamingDefinition& def) {
    if (def.kind == sql::StreamingDefinition::Kind::kFlow && !def.trigger &&
        !def.schedule_every_ms) {
      Result<std::optional<sql::SinkDefinition>> sink =
          session->streaming().sinks().Find(def.target);
      if (sink.ok() && sink->has_value()) {
        return (*sink)->trigger.value_or(stream::Trigger::Default());
      }
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
      if (Key(def) != key) continue;
      Query q;
      q.def = def;
      q.trigger = trigger_for(def);
      q.tracker = RestartTracker(RestartPolicy{options.max_restarts, options.restart_backoff_ms,
                                               options.max_backoff_ms, options.healthy_after_ms});
      queries.push_back(std::move(q));
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
  // --progress-kafka SERVERS/TOPIC: every progress JSON as a record keyed by the query id.
  std::unique_ptr<sinks::KafkaRecordWriter> progress_kafka;
  if (!options.progress_kafka.empty()) {
    const size_t slash = options.progress_kafka.rfind('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == options.progress_kafka.size()) {
      err << "Error: --progress-kafka must be BOOTSTRAP_SERVERS/TOPIC (e.g. "
             "localhost:9092/sluice-progress), got '"
          << options.progress_kafka << "'\n";
      return 1;
    }
    Result<std::unique_ptr<sinks::KafkaRecordWriter>> opened = sinks::KafkaRecordWriter::Open(
        {{"bootstrap.servers", options.progress_kafka.substr(0, slash)}},
        options.progress_kafka.substr(slash + 1));
    if (!opened.ok()) {
      err << "Error: --progress-kafka: " << opened.status().ToString() << "\n";
      return 1;
    }
    progress_kafka = std::move(opened).ValueOrDie();
  }
  std::unique_ptr<server::MonitorServer> ui;  // --ui: fed below, stopped when the run ends
  if (options.ui) {
    Result<std::unique_ptr<server::MonitorServer>> started =
        server::StartMonitorServer(*options.ui);
    if (!started.ok()) {
      err << "Error: " << started.status().ToString() << "\n";
      return 1;
    }
    ui = std::move(started).ValueOrDie();
    out << "monitoring UI at " << ui->url() << std::endl;
  }
  std::mutex out_mu;
  // Live status (out_mu): one view per query name, the board drawn at the bottom of the screen.
  StatusBoard board;
  if (options.live_status) board.set_width(TerminalWidth());
  std::map<std::string, QueryStatusView> views;
  size_t name_width = 0;
  for (const Query& q : queries) name_width = std::max(name_width, q.def.name.size());
  for (const Query& q : queries) {
    views[q.def.name].name = q.def.name + std::string(name_width - q.def.name.size(), ' ');
    views[q.def.name].available_now = q.trigger.kind == stream::TriggerKind::kAvailableNow;
  }
  // A log line on `stream`, above the live status lines when they are shown.
  auto log_line = [&out, &out_mu, &board, &options](std::ostream& stream, const std::string& line) {
    std::lock_guard<std::mutex> lock(out_mu);
    if (options.live_status) out << board.Erase() << std::flush;
    stream << line << std::endl;
    if (options.live_status) out << board.Render() << std::flush;
  };
  sql::StartOptions start;
  start.on_progress = [&out, &out_mu, &progress_log, &progress_kafka, &ui, &options, &board,
                       &views](const std::string& name, const stream::StreamingQueryProgress& p) {
    if (ui) ui->QueryProgress(p);  // only queues an event
    if (progress_kafka) progress_kafka->Write(p.id, stream::ProgressToJson(p));  // never waits
    std::lock_guard<std::mutex> lock(out_mu);
    if (progress_log.is_open()) progress_log << stream::ProgressToJson(p) << std::endl;
    if (options.live_status) {
      QueryStatusView& view = views[name];  // the name padded to the longest
      if (view.name.empty()) view.name = name;
      view.progress = p;
      ++view.batches;
      view.initial_backlog = PeakBacklog(view.initial_backlog, BacklogOf(p));
      board.Set(name, FormatStatusLine(view));
      out << board.Render() << std::flush;
      return;
    }
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
  // A query failed (at start or while running): log why, then schedule its restart, or set
  // `error` and return false when it is not restarted.
  auto on_failure = [&](Query& q, const Status& st, int64_t now) {
    const FailureClass failure = ClassifyFailure(st);
    const RestartDecision d = q.tracker.OnFailure(failure.kind, q.started_ms, now);
    q.started = true;  // a query waiting for its restart counts as started
    if (!d.restart) {
      if (failure.kind == FailureKind::kPermanent) {
        error = st.ToString() + " (not restarted: " + failure.reason + ")";
      } else if (options.max_restarts == 0) {
        error = st.ToString() + " (not restarted: --max-restarts is 0)";
      } else {
        error = st.ToString() + " (gave up after " +
                std::to_string(q.tracker.consecutive_restarts()) + " restarts)";
      }
      return false;
    }
    log_line(err, "query " + q.def.name + " failed: " + st.ToString());
    std::string line = "restarting " + q.def.name + " from its checkpoint ";
    line += d.delay_ms > 0 ? "in " + FormatDurationMs(d.delay_ms) : std::string("now");
    line += " (";
    if (d.restart_number > 0) {
      line += "restart " + std::to_string(d.restart_number) +
              (options.max_restarts < 0 ? "" : " of " + std::to_string(options.max_restarts)) +
              ", ";
    }
    line += failure.reason + ")";
    log_line(err, line);
    q.restart_at_ms = now + d.delay_ms;
    return true;
  };
  for (;;) {
    if (g_stop_requested) break;
    // Start what can start, and restart what is due.
    for (size_t i = 0; i < queries.size() && error.empty(); ++i) {
      Query& q = queries[i];
      const bool restart_due = q.restart_at_ms && MonoMs() >= *q.restart_at_ms;
      if (q.started && !restart_due) continue;
      bool ready = true;
      for (size_t j : q.upstream) {
        const Query& u = queries[j];
        // A running upstream counts once its first batch has created its table.
        Result<bool> created =
            fs::LocalFileSystem()->Exists(fs::JoinPath(u.target_path, "_delta_log"));
        ready = ready && (u.finished ||
                          (u.started && !StopsByItself(u.trigger) && created.ok() && *created));
      }
      if (!ready && !restart_due) continue;
      Result<std::unique_ptr<stream::MicroBatchExecution>> exec =
          session->streaming().Start(q.def, q.trigger, start);
      if (!exec.ok()) {
        q.started_ms = MonoMs();
        if (!on_failure(q, exec.status().WithContext(q.def.name), q.started_ms)) break;
        continue;
      }
      q.exec = std::move(exec).ValueOrDie();
      q.started = true;
      q.started_ms = MonoMs();
      q.restart_at_ms.reset();
      if (ui) ui->QueryStarted(q.exec->id(), q.exec->run_id(), q.def.name, q.trigger);
      if (restart_due) {
        log_line(out, "restarted " + q.def.name + " from its checkpoint (query id " + q.exec->id() +
                          ", new run id " + q.exec->run_id() + ")");
      } else {
        log_line(out, "started " + q.def.name + " (" + q.trigger.ToString() + ")");
      }
    }
    if (!error.empty()) break;
    // Reap what ended.
    bool all_done = true;
    for (Query& q : queries) {
      if (error.empty() && q.exec && !q.finished && !q.exec->IsActive()) {
        if (ui) ReportEnd(*ui, *q.exec);
        if (std::optional<Status> ex = q.exec->Exception()) {
          const std::string id = q.exec->id(), run_id = q.exec->run_id();  // for --ui
          (void)q.exec->Stop();  // joins the query thread; the checkpoint is released
          q.exec.reset();
          if (on_failure(q, *ex, MonoMs()) && ui) ui->QueryRestarting(id, run_id);
        } else {
          q.finished = true;
          log_line(out, "finished " + q.def.name);
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
    if (ui && q.exec && !q.finished) ReportEnd(*ui, *q.exec);
  }
  for (Query& q : queries) {
    if (error.empty() && q.exec && q.exec->Exception()) error = q.exec->Exception()->ToString();
  }
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  if (progress_kafka) {
    // Monitoring never fails the run: undelivered progress records are a warning.
    Status closed = progress_kafka->Close(5000);
    if (!closed.ok()) err << "Warning: --progress-kafka: " << closed.ToString() << "\n";
  }
  if (!error.empty()) {
    err << "Error: " << error << "\n";
    exit_code = 1;
  } else if (g_stop_requested) {
    out << "stopped" << std::endl;
  }
  return exit_code;
}

}  // namespace sluice::cli
