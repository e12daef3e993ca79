#include "sql/pipeline_graph.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <variant>

#include "dialect/tokenizer.h"
#include "sql/pipeline_live.h"
#include "sql/pipeline_references.h"
#include "sql/pipeline_statement_parser.h"
#include "sql/pipeline_views.h"
#include "sql/sink_statement_parser.h"
#include "sql/statement_splitter.h"
#include "sql/streaming_statement_parser.h"
#include "sql/table_catalog.h"
#include "sql/table_statement_parser.h"
#include "stream/trigger.h"

namespace sluice::sql {
namespace {

using Kind = PipelineNode::Kind;

// "syntax error at line 2, column 5" inside a statement that starts on line `first_line` of its
// file: the line made the file's.
std::string WithFileLines(const std::string& message, int first_line) {
  static const std::regex kLine("at line ([0-9]+), column");
  std::smatch m;
  if (!std::regex_search(message, m, kLine)) return message;
  const int line = std::stoi(m[1].str()) + first_line - 1;
  return m.prefix().str() + "at line " + std::to_string(line) + ", column" + m.suffix().str();
}

bool StopsByItself(const std::optional<stream::Trigger>& t) {
  return t &&
         (t->kind == stream::TriggerKind::kAvailableNow || t->kind == stream::TriggerKind::kOnce);
}

// The file line of a statement's first token (the splitter's line is that of its first
// non-blank character, which may be a comment above it).
int FirstTokenLine(const StatementText& st) {
  Result<std::vector<dialect::Token>> tokens = dialect::Tokenize(st.text, dialect::Lexing::kSpark);
  if (!tokens.ok() || tokens->empty()) return st.line;
  const size_t begin = std::min(tokens->front().begin, st.text.size());
  return st.line + static_cast<int>(std::count(st.text.begin(), st.text.begin() + begin, '\n'));
}

// The first words of a statement, lower-cased ("create", "table").
std::vector<std::string> LeadingWords(const std::string& text, size_t n) {
  std::vector<std::string> words;
  Result<std::vector<dialect::Token>> tokens = dialect::Tokenize(text, dialect::Lexing::kSpark);
  if (!tokens.ok()) return words;
  for (const dialect::Token& t : *tokens) {
    if (words.size() == n || t.kind != dialect::TokenKind::kWord) break;
    words.push_back(NormalizeTableName(t.text));
  }
  return words;
}

class Builder {
 public:
  Builder(const std::function<bool(const std::string&)>& exists, bool triggered)
      : exists_(exists), triggered_(triggered) {}

  void AddFile(const PipelineFile& file) {
    for (const StatementText& st : SplitStatements(file.text)) AddStatement(file.path, st);
  }

  // First pass: the views of a file (errors are reported by AddStatement's pass).
  void CollectViews(const PipelineFile& file) {
    for (const StatementText& st : SplitStatements(file.text)) {
      Result<std::string> text = StripLivePrefix(st.text);
      if (!text.ok()) continue;
      Result<std::optional<ViewDefinition>> view = ParseView(*text);
      if (!view.ok() || !view->has_value()) continue;
      raw_views_.emplace(NormalizeTableName((*view)->name), **view);
    }
  }

  // Each view's query with the views it reads inlined (depth first); a view that reads itself
  // through others stays unresolved (the cycle is reported by Order()).
  void ResolveViews() {
    for (const auto& [name, view] : raw_views_) {
      std::set<std::string> visiting;
      Resolve(name, &visiting);
    }
  }

  Result<PipelineGraph> Finish() {
    if (errors_.empty()) {  // every statement parsed, each name declared once
      CheckNames();
      Order();
    }
    if (!errors_.empty()) {
      std::string message;
      for (const std::string& e : errors_) message += (message.empty() ? "" : "\n") + e;
      return Status::InvalidArgument(message);
    }
    return PipelineGraph{std::move(ordered_)};
  }

 private:
  void Fail(const PipelineNode& at, const std::string& what) {
    errors_.push_back(at.Place() + ": " + what);
  }

  bool Resolve(const std::string& name, std::set<std::string>* visiting) {
    if (views_.count(name) > 0) return true;
    auto raw = raw_views_.find(name);
    if (raw == raw_views_.end() || !visiting->insert(name).second) return false;
    Result<QueryReads> reads = ReadsOfQuery(raw->second.query);
    if (!reads.ok()) return false;
    std::map<std::string, ViewDefinition> used;
    for (const std::vector<std::string>* names : {&reads->streams, &reads->tables}) {
      for (const std::string& n : *names) {
        if (raw_views_.count(n) == 0) continue;
        if (!Resolve(n, visiting)) return false;
        used.emplace(n, views_.at(n));
      }
    }
    Result<std::string> query = InlineViews(raw->second.query, used);
    if (!query.ok()) return false;
    ViewDefinition v = raw->second;
    v.query = *query;
    for (const auto& [n, u] : used) v.streaming = v.streaming || u.streaming;
    views_.emplace(name, std::move(v));
    return true;
  }

  void AddStatement(const std::string& file, const StatementText& st) {
    PipelineNode node;
    node.file = file;
    node.line = FirstTokenLine(st);
    Result<std::string> text = StripLivePrefix(st.text);
    if (!text.ok()) return Fail(node, WithFileLines(text.status().message(), st.line));
    node.text = *text;
    Result<std::optional<ViewDefinition>> view = ParseView(node.text);
    if (!view.ok()) return Fail(node, WithFileLines(view.status().message(), st.line));
    if (view->has_value()) {
      node.kind = Kind::kView;
      node.name = NormalizeTableName((*view)->name);
      auto resolved = views_.find(node.name);
      // Unresolved: it reads itself through other views; AddReads of its own query then names
      // the views it reads, and Order() reports the cycle.
      node.query = resolved != views_.end() ? resolved->second.query : (*view)->query;
      if (!AddReads(&node, node.query, st.line)) return;
      node.text.clear();
      return Add(std::move(node));
    }
    Result<std::string> inlined = InlineViews(node.text, views_);
    if (!inlined.ok()) return Fail(node, WithFileLines(inlined.status().message(), st.line));
    node.text = *inlined;
    const std::vector<std::string> words = LeadingWords(node.text, 3);
    if (!words.empty() && (words[0] == "set" || words[0] == "reset")) {
      node.kind = Kind::kSetting;
      return Add(std::move(node));
    }
    auto syntax = [&](const Status& s) { Fail(node, WithFileLines(s.message(), st.line)); };
    Result<std::optional<StreamingStatement>> streaming = ParseStreamingStatement(node.text);
    if (!streaming.ok()) return syntax(streaming.status());
    if (streaming->has_value()) {
      if (const auto* c = std::get_if<CreateStreamingTableStatement>(&**streaming)) {
        node.kind = Kind::kStreamingTable;
        node.name = NormalizeTableName(c->name);
        node.has_query = c->query.has_value();
        node.stops_by_itself = triggered_ || StopsByItself(c->trigger);
        if (c->query && !AddReads(&node, *c->query, st.line)) return;
        return Add(std::move(node));
      }
      if (const auto* f = std::get_if<CreateFlowStatement>(&**streaming)) {
        node.kind = Kind::kFlow;
        node.name = NormalizeTableName(f->name);
        node.target = NormalizeTableName(f->target);
        if (!AddReads(&node, f->query, st.line)) return;
        return Add(std::move(node));
      }
      return Fail(node,
                  "a pipeline declares datasets; REFRESH and SHOW are not pipeline statements "
                  "(sluice run refreshes every dataset of the pipeline; run them with sluice sql)");
    }
    Result<std::optional<SinkStatement>> sink = ParseSinkStatement(node.text);
    if (!sink.ok()) return syntax(sink.status());
    if (sink->has_value()) {
      if (const auto* c = std::get_if<CreateSinkStatement>(&**sink)) {
        node.kind = Kind::kSink;
        node.name = NormalizeTableName(c->name);
        node.stops_by_itself = triggered_ || StopsByItself(c->trigger);
        return Add(std::move(node));
      }
      return Fail(node,
                  "a pipeline declares datasets; DROP, REFRESH and SHOW SINK are not pipeline "
                  "statements (run them with sluice sql)");
    }
    Result<std::optional<CreateMaterializedViewStatement>> mv = ParseMaterializedView(node.text);
    if (!mv.ok()) return syntax(mv.status());
    if (mv->has_value()) {
      node.kind = Kind::kMaterializedView;
      node.name = NormalizeTableName((*mv)->name);
      if (!AddReads(&node, (*mv)->query, st.line)) return;
      node.text = MaterializedViewRefreshSql(**mv);
      node.query = (*mv)->query;
      node.expectations = (*mv)->expectations;
      return Add(std::move(node));
    }
    Result<std::optional<TableStatement>> table = ParseTableStatement(node.text);
    if (!table.ok()) return syntax(table.status());
    std::string first = words.empty() ? std::string() : words[0];
    if (first == "create" && words.size() >= 2) first += " " + words[1];
    for (char& c : first) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    Fail(node,
         "a pipeline declares datasets (CREATE STREAMING TABLE, CREATE MATERIALIZED VIEW, CREATE "
         "VIEW, CREATE FLOW, CREATE SINK) and settings (SET); " +
             (first.empty() ? std::string("this statement") : first + " statements") +
             " change data or run queries and are not run by sluice run: run them with sluice "
             "sql");
  }

  // Adds the names `query` reads; false (and an error) when it cannot be read.
  bool AddReads(PipelineNode* node, const std::string& query, int first_line) {
    Result<QueryReads> reads = ReadsOfQuery(query);
    if (!reads.ok()) {
      Fail(*node, WithFileLines(reads.status().message(), first_line));
      return false;
    }
    node->streams = reads->streams;
    for (const std::vector<std::string>* names : {&reads->streams, &reads->tables}) {
      for (const std::string& n : *names) {
        if (std::find(node->reads.begin(), node->reads.end(), n) == node->reads.end()) {
          node->reads.push_back(n);
        }
      }
    }
    return true;
  }

  void Add(PipelineNode node) {
    if (node.kind != Kind::kSetting) {
      std::map<std::string, size_t>& names = node.kind == Kind::kFlow ? flows_ : datasets_;
      auto [it, inserted] = names.emplace(node.name, nodes_.size());
      if (!inserted) {
        const PipelineNode& first = nodes_[it->second];
        return Fail(node, std::string(node.kind == Kind::kFlow ? "flow" : "dataset") + " '" +
                              node.name + "' is defined twice: as a " +
                              PipelineNodeKindName(first.kind) + " at " + first.Place() +
                              " and as a " + PipelineNodeKindName(node.kind) + " here");
      }
    }
    nodes_.push_back(std::move(node));
  }

  // Every flow target and every name read is a dataset of the pipeline or exists.
  void CheckNames() {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      PipelineNode& node = nodes_[i];
      std::set<size_t> deps;
      if (node.kind == Kind::kFlow) {
        auto t = datasets_.find(node.target);
        if (t != datasets_.end()) {
          deps.insert(t->second);
        } else if (!exists_(node.target)) {
          Fail(node, "flow '" + node.name + "' writes to '" + node.target +
                         "', which is neither defined in the pipeline nor an existing streaming "
                         "table or sink");
        }
      }
      if (node.kind == Kind::kMaterializedView && !node.streams.empty()) {
        Fail(node, "materialized view '" + node.name + "' reads '" + node.streams[0] +
                       "' as a STREAM (directly or through a view): a materialized view is a "
                       "batch query; read the table without STREAM");
      }
      for (const std::string& read : node.reads) {
        auto d = datasets_.find(read);
        if (d != datasets_.end()) {
          CheckRead(node, read, nodes_[d->second]);
          deps.insert(d->second);
          // Who reads a table starts after the flows that fill it are defined.
          for (size_t j = 0; j < nodes_.size(); ++j) {
            if (nodes_[j].kind == Kind::kFlow && nodes_[j].target == read) deps.insert(j);
          }
        } else if (!exists_(read)) {
          Fail(node, std::string(PipelineNodeKindName(node.kind)) + " '" + node.name + "' reads '" +
                         read +
                         "', which is neither defined in the pipeline nor an existing table");
        }
      }
      node.depends_on.assign(deps.begin(), deps.end());
    }
  }

  // A materialized view is not a stream, and is refreshed once its inputs have stopped.
  void CheckRead(const PipelineNode& node, const std::string& read, const PipelineNode& input) {
    const bool as_stream =
        std::find(node.streams.begin(), node.streams.end(), read) != node.streams.end();
    if (input.kind == Kind::kMaterializedView && as_stream) {
      Fail(node, std::string(PipelineNodeKindName(node.kind)) + " '" + node.name +
                     "' reads materialized view '" + read + "' (" + input.Place() +
                     ") as a STREAM: a materialized view is recomputed by each refresh, not "
                     "appended to; read it without STREAM, or make '" +
                     read + "' a streaming table");
    }
    if (node.kind == Kind::kMaterializedView && input.kind == Kind::kStreamingTable &&
        !input.stops_by_itself) {
      Fail(node, "materialized view '" + node.name + "' reads streaming table '" + read + "' (" +
                     input.Place() +
                     "), which runs until stopped: a materialized view is refreshed once its "
                     "inputs have processed what is available; give '" +
                     read + "' TRIGGER AVAILABLE NOW (or ONCE)");
    }
  }

  // Settings first, then Kahn's algorithm, ties in file order; a leftover is a cycle.
  void Order() {
    std::vector<size_t> position(nodes_.size());
    std::vector<bool> done(nodes_.size(), false);
    std::vector<size_t> order;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].kind == Kind::kSetting) {
        order.push_back(i);
        done[i] = true;
      }
    }
    for (bool progress = true; progress;) {
      progress = false;
      for (size_t i = 0; i < nodes_.size(); ++i) {
        if (done[i]) continue;
        const auto& deps = nodes_[i].depends_on;
        if (std::all_of(deps.begin(), deps.end(), [&](size_t d) { return done[d]; })) {
          order.push_back(i);
          done[i] = true;
          progress = true;
          break;  // restart from the top: ties in file order
        }
      }
    }
    if (order.size() < nodes_.size()) return FailCycle(done);
    for (size_t k = 0; k < order.size(); ++k) position[order[k]] = k;
    for (size_t i : order) {
      PipelineNode n = nodes_[i];
      for (size_t& d : n.depends_on) d = position[d];
      ordered_.push_back(std::move(n));
    }
  }

  // Names one cycle among the nodes not ordered: walk dependencies until a node repeats.
  void FailCycle(const std::vector<bool>& done) {
    size_t start = 0;
    while (done[start]) ++start;
    std::vector<size_t> path;
    std::vector<int> seen_at(nodes_.size(), -1);
    size_t at = start;
    while (seen_at[at] < 0) {
      seen_at[at] = static_cast<int>(path.size());
      path.push_back(at);
      for (size_t d : nodes_[at].depends_on) {
        if (!done[d]) {
          at = d;
          break;
        }
      }
    }
    std::vector<size_t> cycle(path.begin() + seen_at[at], path.end());
    // Reported in reading direction: 'a' (file:3) reads 'b' (file:7), which reads 'a'.
    const PipelineNode& first = nodes_[cycle.front()];
    std::string message =
        "the pipeline has a cycle: " + std::string(PipelineNodeKindName(first.kind)) + " '" +
        first.name + "' (" + first.Place() + ")";
    for (size_t k = 0; k < cycle.size(); ++k) {
      const PipelineNode& n = nodes_[cycle[k]];
      const PipelineNode& next = nodes_[cycle[(k + 1) % cycle.size()]];
      std::string verb = "reads";
      if (n.kind == Kind::kFlow && next.name == n.target) {
        verb = "writes to";
      } else if (next.kind == Kind::kFlow) {
        verb = "reads the table written by";
      }
      message += std::string(k == 0 ? " " : ", which ") + verb + " " +
                 PipelineNodeKindName(next.kind) + " '" + next.name + "'";
      if (k + 1 < cycle.size()) message += " (" + next.Place() + ")";
    }
    Fail(nodes_[cycle.front()], message);
  }

  const std::function<bool(const std::string&)>& exists_;
  const bool triggered_;
  std::vector<PipelineNode> nodes_;         // in file order
  std::map<std::string, size_t> datasets_;  // streaming tables and sinks -> node
  std::map<std::string, size_t> flows_;
  std::map<std::string, ViewDefinition> raw_views_;  // lower-cased name -> as written
  std::map<std::string, ViewDefinition> views_;      // the same, views they read inlined
  std::vector<PipelineNode> ordered_;
  std::vector<std::string> errors_;
};

}  // namespace

const char* PipelineNodeKindName(PipelineNode::Kind kind) {
  switch (kind) {
    case Kind::kSetting:
      return "setting";
    case Kind::kStreamingTable:
      return "streaming table";
    case Kind::kFlow:
      return "flow";
    case Kind::kSink:
      return "sink";
    case Kind::kMaterializedView:
      return "materialized view";
    case Kind::kView:
      return "view";
  }
  return "?";
}

Result<PipelineGraph> BuildPipelineGraph(const std::vector<PipelineFile>& files,
                                         const std::function<bool(const std::string&)>& exists,
                                         bool triggered) {
  Builder builder(exists, triggered);
  for (const PipelineFile& f : files) builder.CollectViews(f);
  builder.ResolveViews();
  for (const PipelineFile& f : files) builder.AddFile(f);
  return builder.Finish();
}

}  // namespace sluice::sql
