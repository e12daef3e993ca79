#include "cli/pipeline_runner.h"

#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
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
#include "fs/routing_file_system.h"
#include "fs/scratch_dir.h"
#include "server/monitor_server.h"
#include "sinks/kafka_record_writer.h"
#include "sql/pipeline_expectations.h"
#include "sql/pipeline_graph.h"
#include "sql/pipeline_schema_check.h"
#include "sql/session.h"
#include "sql/sink_catalog.h"
#include "sql/streaming_table_catalog.h"
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
  std::set<size_t> upstream;        // indexes of queries whose table this one reads
  std::set<size_t> upstream_views;  // indexes of the deferred materialized views it reads
  std::string target_path;          // the Delta table it writes
  std::unique_ptr<stream::MicroBatchExecution> exec;  // null while waiting for a restart
  bool started = false;
  bool finished = false;
  // Supervision: when the current run started, when the next restart is due, the budget.
  int64_t started_ms = 0;
  std::optional<int64_t> restart_at_ms;
  RestartTracker tracker{RestartPolicy{}};
};

// A materialized view refreshed during the run, once what it reads is done.
struct View {
  const sql::PipelineNode* node = nullptr;  // in the graph, which outlives the run
  std::set<size_t> upstream;                // queries writing the tables it reads
  std::set<size_t> upstream_views;          // deferred views it reads
  bool refreshed = false;
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

// The pipeline's files: `path` itself, or the *.sql files of the directory `path`, sorted.
Result<std::vector<sql::PipelineFile>> ReadPipelineFiles(const std::string& path) {
  std::error_code ec;
  std::vector<std::string> paths;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".sql") {
        paths.push_back(entry.path().string());
      }
    }
    if (ec) return Status::IOError("cannot list " + path + ": " + ec.message());
    std::sort(paths.begin(), paths.end());
    if (paths.empty()) return Status::InvalidArgument("no .sql files in the directory " + path);
  } else {
    paths.push_back(path);
  }
  std::vector<sql::PipelineFile> files;
  for (const std::string& p : paths) {
    std::ifstream in(p);
    if (!in) return Status::IOError("cannot read " + p);
    std::stringstream text;
    text << in.rdbuf();
    files.push_back({p, text.str()});
  }
  return files;
}

// Whether a name exists in the warehouse outside the pipeline: a Delta table, a streaming table
// defined earlier (its table is created by its first batch) or a sink. Reads only.
std::function<bool(const std::string&)> ExistsIn(const std::string& warehouse) {
  return [warehouse](const std::string& name) {
    sql::TableCatalog tables(fs::PathFileSystem(), warehouse);
    Result<bool> table = tables.Exists(sql::TableName{name, false});
    if (table.ok() && *table) return true;
    sql::StreamingTableCatalog defs(fs::PathFileSystem(), warehouse);
    Result<std::optional<sql::StreamingDefinition>> def =
        defs.Find(sql::StreamingDefinition::Kind::kTable, name);
    if (def.ok() && def->has_value()) return true;
    sql::SinkCatalog sinks(fs::PathFileSystem(), warehouse);
    Result<std::optional<sql::SinkDefinition>> sink = sinks.Find(name);
    return sink.ok() && sink->has_value();
  };
}

// The schema check of the graph on a session that only reads: the warehouse's when it exists
// (or is on an object store), else an empty one in a scratch directory (so that a new local
// warehouse is not created by a check).
Status CheckSchemas(const sql::PipelineGraph& graph, const std::string& warehouse) {
  Result<bool> exists = fs::PathFileSystem()->Exists(warehouse);
  std::unique_ptr<fs::ScratchDir> scratch;
  sql::SessionOptions session_options;
  session_options.warehouse = warehouse;
  // An object store has no directories to create: its warehouse is opened as it is.
  if (fs::PathScheme(warehouse).empty() && (!exists.ok() || !*exists)) {
    // Removed below; what a killed check left, by the next one (fs/scratch_dir.h).
    SLUICE_ASSIGN_OR_RETURN(scratch, fs::ScratchDir::Make("sluice-check"));
    session_options.warehouse = scratch->path() + "/warehouse";
  }
  Result<std::unique_ptr<sql::Session>> session = sql::Session::Open(session_options);
  return session.ok() ? sql::CheckPipelineSchemas(graph, **session) : session.status();
}

// --dry-run: the graph in run order, then a summary line.
void PrintGraph(const sql::PipelineGraph& graph, std::ostream& out) {
  std::map<sql::PipelineNode::Kind, int> counts;
  for (const sql::PipelineNode& n : graph.nodes) {
    ++counts[n.kind];
    out << sql::PipelineNodeKindName(n.kind);
    if (!n.name.empty()) out << " " << n.name;
    out << " (" << n.Place() << ")";
    if (n.kind == sql::PipelineNode::Kind::kFlow) out << " into " << n.target;
    if (!n.reads.empty()) {
      out << " reads ";
      for (size_t i = 0; i < n.reads.size(); ++i) out << (i ? ", " : "") << n.reads[i];
    }
    out << "\n";
  }
  auto count = [&](sql::PipelineNode::Kind k, const char* one, const char* many) {
    const int c = counts[k];
    return std::to_string(c) + " " + (c == 1 ? one : many);
  };
  out << "valid: "
      << count(sql::PipelineNode::Kind::kStreamingTable, "streaming table", "streaming tables")
      << ", "
      << count(sql::PipelineNode::Kind::kMaterializedView, "materialized view",
               "materialized views")
      << ", " << count(sql::PipelineNode::Kind::kView, "view", "views") << ", "
      << count(sql::PipelineNode::Kind::kFlow, "flow", "flows") << ", "
      << count(sql::PipelineNode::Kind::kSink, "sink", "sinks") << ", "
      << count(sql::PipelineNode::Kind::kSetting, "setting", "settings")
      << "; nothing was created or run" << std::endl;
}

// Prints each line of a (multi-line) error as "Error: <line>".
void PrintErrors(const Status& st, std::ostream& err) {
  std::stringstream lines(st.message());
  for (std::string line; std::getline(lines, line);) err << "Error: " << line << "\n";
}

// " expectation a: 3 passed, 1 failed; b: ...; 1 row dropped" for a data_quality object.
std::string DescribeDataQuality(const nlohmann::ordered_json& dq) {
  std::string out;
  if (auto list = dq.find("expectations"); list != dq.end() && list->is_array()) {
    for (const auto& e : *list) {
      out += (out.empty() ? "" : ", ") + e.value("name", std::string("?")) + " " +
             std::to_string(e.value("passed_records", int64_t{0})) + " passed, " +
             std::to_string(e.value("failed_records", int64_t{0})) + " failed";
    }
  }
  const int64_t dropped = dq.value("dropped_records", int64_t{0});
  if (dropped > 0)
    out += "; " + std::to_string(dropped) + (dropped == 1 ? " row" : " rows") + " dropped";
  return out;
}

// Refreshes a materialized view (node.text). With expectations, their counts over the new
// result come first: a FAIL UPDATE expectation with a failing row fails the refresh before the
// view is replaced. Returns the line to print.
Result<std::string> RefreshView(sql::Session& session, const sql::PipelineNode& node) {
  std::vector<sql::ExpectationCount> counts;
  int64_t dropped = 0;
  if (!node.expectations.empty()) {
    SLUICE_ASSIGN_OR_RETURN(engine::Batch row, session.Execute(sql::ExpectationCountsSql(
                                                   node.query, node.expectations)));
    const size_t k = node.expectations.size();
    if (row.num_rows() != 1 || row.num_columns() != k + 2) {
      return Status::Internal("materialized view " + node.name +
                              ": the expectation counts query returned an unexpected shape");
    }
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> n, row.GetInt64(0, k + 1));
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> d, row.GetInt64(0, k));
    dropped = d.value_or(0);
    for (size_t i = 0; i < k; ++i) {
      const sql::Expectation& e = node.expectations[i];
      SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> failed, row.GetInt64(0, i));
      counts.push_back({e.name, n.value_or(0) - failed.value_or(0), failed.value_or(0)});
      if (failed.value_or(0) > 0 && e.action == sql::Expectation::Action::kFailUpdate) {
        SLUICE_ASSIGN_OR_RETURN(engine::Batch bad,
                                session.Execute(sql::FirstFailingRowSql(node.query, e)));
        return sql::ExpectationFailed(e, node.name, "in its refresh",
                                      bad.num_rows() > 0 ? sql::RowJson(bad, 0) : "?");
      }
    }
  }
  SLUICE_RETURN_NOT_OK(session.Execute(node.text).status());
  std::string line = "refreshed " + node.name + " (materialized view, full recompute)";
  if (!node.expectations.empty()) {
    line +=
        "; expectations: " + DescribeDataQuality(sql::DataQualityJson(node.name, dropped, counts));
  }
  return line;
}

}  // namespace

int RunPipeline(const RunCommandOptions& options, std::ostream& out, std::ostream& err) {
  // 0. Options that can be checked without touching anything.
  if (options.ui) {
    Result<server::UiAddress> address = server::ParseUiAddress(*options.ui);
    if (!address.ok()) {
      err << "Error: --ui: " << address.status().message() << "\n";
      return 1;
    }
  }
  const size_t kafka_slash = options.progress_kafka.rfind('/');
  if (!options.progress_kafka.empty() && (kafka_slash == std::string::npos || kafka_slash == 0 ||
                                          kafka_slash + 1 == options.progress_kafka.size())) {
    err << "Error: --progress-kafka must be BOOTSTRAP_SERVERS/TOPIC (e.g. "
           "localhost:9092/sluice-progress), got '"
        << options.progress_kafka << "'\n";
    return 1;
  }
  // 1. The whole pipeline parsed and checked as a graph (sql/pipeline_graph.h) before anything
  // is created: the warehouse is only read.
  Result<std::vector<sql::PipelineFile>> files = ReadPipelineFiles(options.file);
  if (!files.ok()) {
    err << "Error: " << files.status().message() << "\n";
    return 1;
  }
  Result<sql::PipelineGraph> graph =
      sql::BuildPipelineGraph(*files, ExistsIn(options.warehouse), options.triggered);
  if (!graph.ok()) {
    PrintErrors(graph.status(), err);
    err << "Error: the pipeline is not valid; nothing was created or run\n";
    return 1;
  }
  // Every query bound against its inputs' schemas (sql/pipeline_schema_check.h), still
  // creating nothing.
  if (Status schemas = CheckSchemas(*graph, options.warehouse); !schemas.ok()) {
    PrintErrors(schemas, err);
    err << "Error: the pipeline is not valid; nothing was created or run\n";
    return 1;
  }
  if (options.dry_run) {
    PrintGraph(*graph, out);
    return 0;
  }
  // 2. What the run writes to besides the warehouse, opened before anything is created.
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
    Result<std::unique_ptr<sinks::KafkaRecordWriter>> opened = sinks::KafkaRecordWriter::Open(
        {{"bootstrap.servers", options.progress_kafka.substr(0, kafka_slash)}},
        options.progress_kafka.substr(kafka_slash + 1));
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
  sql::SessionOptions session_options;
  session_options.warehouse = options.warehouse;
  Result<std::unique_ptr<sql::Session>> opened = sql::Session::Open(session_options);
  if (!opened.ok()) {
    err << "Error: " << opened.status().ToString() << "\n";
    return 1;
  }
  std::unique_ptr<sql::Session> session = std::move(opened).ValueOrDie();

  // 3. The statements in the graph's order: settings, then each dataset after what it reads.
  std::vector<std::string> defined;  // Key()s, in run order
  // Materialized views: refreshed here when they read only tables that exist and views refreshed
  // here, else in the run once the queries they read have finished.
  std::vector<View> views_to_refresh;
  std::set<std::string> refreshed_now;
  // Streaming tables of declared columns and sinks: made (or kept) here, filled only by flows.
  std::vector<std::string> nothing_to_run;
  std::map<std::string, std::vector<std::string>> reads_of;  // Key() -> names it reads
  for (const sql::PipelineNode& node : graph->nodes) {
    if (node.kind == sql::PipelineNode::Kind::kView) continue;  // inlined where it is read
    if (node.kind == sql::PipelineNode::Kind::kMaterializedView) {
      bool now = true;
      for (size_t d : node.depends_on) {
        now = now && refreshed_now.count(graph->nodes[d].name) > 0;
      }
      if (now) {
        Result<std::string> r = RefreshView(*session, node);
        if (!r.ok()) {
          err << "Error: " << node.Place() << ": " << r.status().ToString() << "\n";
          return 1;
        }
        refreshed_now.insert(node.name);
        out << *r << std::endl;
      } else {
        views_to_refresh.push_back(View{&node});
      }
      continue;
    }
    const bool is_flow = node.kind == sql::PipelineNode::Kind::kFlow;
    if (is_flow || node.kind == sql::PipelineNode::Kind::kStreamingTable) {
      reads_of[(is_flow ? "flow:" : "table:") + node.name] = node.reads;
    }
    Result<engine::Batch> r = session->Execute(node.text);
    if (!r.ok()) {
      err << "Error: " << node.Place() << ": " << r.status().ToString() << "\n";
      return 1;
    }
    if (node.kind == sql::PipelineNode::Kind::kStreamingTable && node.has_query) {
      defined.push_back("table:" + node.name);
    } else if (node.kind == sql::PipelineNode::Kind::kStreamingTable ||
               node.kind == sql::PipelineNode::Kind::kSink) {
      nothing_to_run.push_back(node.name);
    } else if (node.kind == sql::PipelineNode::Kind::kFlow) {
      defined.push_back("flow:" + node.name);
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
      if (options.triggered && q.trigger.kind != stream::TriggerKind::kOnce) {
        q.trigger = stream::Trigger::AvailableNow();
      }
      q.tracker = RestartTracker(RestartPolicy{options.max_restarts, options.restart_backoff_ms,
                                               options.max_backoff_ms, options.healthy_after_ms});
      queries.push_back(std::move(q));
    }
  }
  if (queries.empty() && views_to_refresh.empty()) {
    if (!nothing_to_run.empty()) {
      std::string names;
      for (const std::string& n : nothing_to_run) names += (names.empty() ? "" : ", ") + n;
      out << names << ": defined; no query or flow writes "
          << (nothing_to_run.size() == 1 ? "it" : "them") << " in " << options.file
          << ", so nothing runs\n";
    } else if (refreshed_now.empty()) {
      out << "no streaming tables or flows in " << options.file << "\n";
    }
    return 0;
  }
  // A deferred materialized view waits for the queries writing what it reads and for the views
  // it reads; a query reading a deferred view waits for its refresh.
  for (View& v : views_to_refresh) {
    for (size_t i = 0; i < queries.size(); ++i) {
      const auto& r = v.node->reads;
      if (std::find(r.begin(), r.end(), queries[i].def.target) != r.end()) v.upstream.insert(i);
    }
    for (size_t j = 0; j < views_to_refresh.size(); ++j) {
      const auto& r = v.node->reads;
      if (std::find(r.begin(), r.end(), views_to_refresh[j].node->name) != r.end()) {
        v.upstream_views.insert(j);
      }
    }
  }
  for (Query& q : queries) {
    const auto& r = reads_of[Key(q.def)];
    for (size_t j = 0; j < views_to_refresh.size(); ++j) {
      if (std::find(r.begin(), r.end(), views_to_refresh[j].node->name) != r.end()) {
        q.upstream_views.insert(j);
      }
    }
  }
  // Dependencies at run time: a query reads the table (path) another one writes.
  const std::string warehouse = session->warehouse();
  sql::TableCatalog tables(fs::PathFileSystem(), warehouse);
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

  // 4. Run.
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
  // Expectation counts per dataset and batch id (a batch re-run replaces its counts).
  std::map<std::string, std::map<int64_t, nlohmann::ordered_json>> data_quality;
  start.on_progress = [&out, &out_mu, &progress_log, &progress_kafka, &ui, &options, &board, &views,
                       &data_quality](const std::string& name,
                                      const stream::StreamingQueryProgress& p) {
    if (ui) ui->QueryProgress(p);  // only queues an event
    if (progress_kafka) progress_kafka->Write(p.id, stream::ProgressToJson(p));  // never waits
    std::lock_guard<std::mutex> lock(out_mu);
    const auto dq = p.observed_metrics.find(sql::kDataQualityMetric);
    if (dq != p.observed_metrics.end()) data_quality[name][p.batch_id] = dq->second;
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
    if (dq != p.observed_metrics.end()) {
      out << std::left << std::setw(20) << name
          << " expectations: " << DescribeDataQuality(dq->second) << std::endl;
    }
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
    // Refresh the materialized views whose inputs are done (on this thread, one at a time).
    for (View& v : views_to_refresh) {
      if (v.refreshed || !error.empty()) continue;
      bool ready = true;
      for (size_t i : v.upstream) ready = ready && queries[i].finished;
      for (size_t j : v.upstream_views) ready = ready && views_to_refresh[j].refreshed;
      if (!ready) continue;
      Result<std::string> r = RefreshView(*session, *v.node);
      if (!r.ok()) {
        error = v.node->Place() + ": " + r.status().ToString();
        break;
      }
      v.refreshed = true;
      log_line(out, *r);
    }
    if (!error.empty()) break;
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
            fs::PathFileSystem()->Exists(fs::JoinPath(u.target_path, "_delta_log"));
        ready = ready && (u.finished ||
                          (u.started && !StopsByItself(u.trigger) && created.ok() && *created));
      }
      for (size_t j : q.upstream_views) ready = ready && views_to_refresh[j].refreshed;
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
    for (const View& v : views_to_refresh) all_done = all_done && v.refreshed;
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
  // The expectations' totals of the run, per dataset: each batch id counted once.
  for (const auto& [name, batches] : data_quality) {
    std::map<std::string, std::pair<int64_t, int64_t>> totals;  // name -> passed, failed
    std::vector<std::string> order;
    int64_t dropped = 0;
    for (const auto& [batch_id, dq] : batches) {
      dropped += dq.value("dropped_records", int64_t{0});
      for (const auto& e : dq["expectations"]) {
        const std::string n = e.value("name", std::string("?"));
        if (totals.find(n) == totals.end()) order.push_back(n);
        totals[n].first += e.value("passed_records", int64_t{0});
        totals[n].second += e.value("failed_records", int64_t{0});
      }
    }
    std::vector<sql::ExpectationCount> counts;
    counts.reserve(order.size());
    for (const std::string& n : order) counts.push_back({n, totals[n].first, totals[n].second});
    out << "expectations of " << name << " (" << batches.size()
        << (batches.size() == 1 ? " batch" : " batches")
        << "): " << DescribeDataQuality(sql::DataQualityJson(name, dropped, counts)) << std::endl;
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
