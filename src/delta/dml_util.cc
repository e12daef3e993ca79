#include "delta/dml_util.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "delta/checkpoint_writer.h"
#include "delta/column_mapping.h"
#include "delta/paths.h"
#include "delta/values.h"
#include "delta/write_util.h"

namespace sluice::delta {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

enum class TokKind { kIdent, kQuotedIdent, kString, kNumber, kOp, kDot, kOther };
struct Tok {
  TokKind kind;
  std::string text;  // identifiers unquoted; strings unescaped
};

// Tokenizes a conjunct; nullopt on anything unusual (unterminated quotes...).
std::optional<std::vector<Tok>> Tokenize(std::string_view s) {
  std::vector<Tok> out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (IsIdentStart(c)) {
      size_t j = i;
      while (j < s.size() && IsIdentChar(s[j])) ++j;
      out.push_back({TokKind::kIdent, std::string(s.substr(i, j - i))});
      i = j;
    } else if (c == '"' || c == '`') {
      std::string text;
      size_t j = i + 1;
      for (;;) {
        if (j >= s.size()) return std::nullopt;
        if (s[j] == c) {
          if (j + 1 < s.size() && s[j + 1] == c) {
            text += c;
            j += 2;
            continue;
          }
          break;
        }
        text += s[j++];
      }
      out.push_back({TokKind::kQuotedIdent, text});
      i = j + 1;
    } else if (c == '\'') {
      std::string text;
      size_t j = i + 1;
      for (;;) {
        if (j >= s.size()) return std::nullopt;
        if (s[j] == '\'') {
          if (j + 1 < s.size() && s[j + 1] == '\'') {
            text += '\'';
            j += 2;
            continue;
          }
          break;
        }
        if (s[j] == '\\') return std::nullopt;  // escapes: leave to DuckDB
        text += s[j++];
      }
      out.push_back({TokKind::kString, text});
      i = j + 1;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '-' && i + 1 < s.size() &&
                std::isdigit(static_cast<unsigned char>(s[i + 1])) &&
                (out.empty() || out.back().kind == TokKind::kOp))) {
      size_t j = i + 1;
      while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
      if (j < s.size() && (IsIdentChar(s[j]))) return std::nullopt;  // 1e5, 0x.., 1abc
      out.push_back({TokKind::kNumber, std::string(s.substr(i, j - i))});
      i = j;
    } else if (c == '.') {
      out.push_back({TokKind::kDot, "."});
      ++i;
    } else if (c == '=' || c == '<' || c == '>' || c == '!') {
      size_t j = i + 1;
      if (j < s.size() && (s[j] == '=' || s[j] == '>')) ++j;
      out.push_back({TokKind::kOp, std::string(s.substr(i, j - i))});
      i = j;
    } else {
      out.push_back({TokKind::kOther, std::string(1, c)});
      ++i;
    }
  }
  return out;
}

// Splits at top-level AND; nullopt when there is a top-level OR (or unbalanced text).
std::optional<std::vector<std::string>> SplitConjunctsImpl(std::string_view s) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = 0;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '\'' || c == '"' || c == '`') {
      size_t j = i + 1;
      while (j < s.size() && s[j] != c) ++j;
      if (j >= s.size()) return std::nullopt;
      i = j + 1;
      continue;
    }
    if (c == '(') ++depth;
    if (c == ')') {
      if (--depth < 0) return std::nullopt;
    }
    if (depth == 0 && IsIdentStart(c) && (i == 0 || !IsIdentChar(s[i - 1]))) {
      size_t j = i;
      while (j < s.size() && IsIdentChar(s[j])) ++j;
      std::string word = Lower(s.substr(i, j - i));
      if (word == "or") return std::nullopt;
      if (word == "and") {
        parts.emplace_back(s.substr(start, i - start));
        start = j;
      }
      i = j;
      continue;
    }
    ++i;
  }
  if (depth != 0) return std::nullopt;
  parts.emplace_back(s.substr(start));
  return parts;
}

bool LiteralFitsType(const Tok& lit, const engine::DataType& type) {
  if (engine::IsNumeric(type.id)) return lit.kind == TokKind::kNumber;
  switch (type.id) {
    case engine::TypeId::kVarchar:
    case engine::TypeId::kDate:
      return lit.kind == TokKind::kString;
    default:
      return false;  // timestamps, booleans, nested: no pruning
  }
}

std::optional<CompareOp> ParseOp(const std::string& op, bool flip) {
  CompareOp r;
  if (op == "=" || op == "==") {
    r = CompareOp::kEq;
  } else if (op == "<>" || op == "!=") {
    r = CompareOp::kNe;
  } else if (op == "<") {
    r = flip ? CompareOp::kGt : CompareOp::kLt;
  } else if (op == "<=") {
    r = flip ? CompareOp::kGe : CompareOp::kLe;
  } else if (op == ">") {
    r = flip ? CompareOp::kLt : CompareOp::kGt;
  } else if (op == ">=") {
    r = flip ? CompareOp::kLe : CompareOp::kGe;
  } else {
    return std::nullopt;
  }
  return r;
}

// Reads a possibly qualified column reference at toks[*i]; returns its name.
std::optional<std::string> ReadColumnRef(const std::vector<Tok>& toks, size_t* i,
                                         std::string_view alias, bool require_qualifier) {
  auto is_ident = [&](size_t k) {
    return k < toks.size() &&
           (toks[k].kind == TokKind::kIdent || toks[k].kind == TokKind::kQuotedIdent);
  };
  if (!is_ident(*i)) return std::nullopt;
  if (*i + 1 < toks.size() && toks[*i + 1].kind == TokKind::kDot && is_ident(*i + 2)) {
    if (alias.empty() || Lower(toks[*i].text) != Lower(alias)) return std::nullopt;
    std::string name = toks[*i + 2].text;
    *i += 3;
    return name;
  }
  if (require_qualifier) return std::nullopt;
  std::string name = toks[*i].text;
  *i += 1;
  return name;
}

const engine::Field* FindField(const engine::Schema& schema, const std::string& name) {
  for (const engine::Field& f : schema) {
    if (Lower(f.name) == Lower(name)) return &f;
  }
  return nullptr;
}

std::optional<ColumnPredicate> ParseConjunct(std::string_view text, const engine::Schema& schema,
                                             std::string_view alias, bool require_qualifier) {
  auto toks = Tokenize(text);
  if (!toks || toks->empty()) return std::nullopt;
  const std::vector<Tok>& t = *toks;
  // col IS [NOT] NULL
  {
    size_t i = 0;
    auto col = ReadColumnRef(t, &i, alias, require_qualifier);
    if (col && i < t.size() && t[i].kind == TokKind::kIdent && Lower(t[i].text) == "is") {
      const engine::Field* f = FindField(schema, *col);
      if (!f) return std::nullopt;
      if (i + 2 == t.size() && Lower(t[i + 1].text) == "null") {
        return ColumnPredicate{f->name, CompareOp::kIsNull, std::nullopt};
      }
      if (i + 3 == t.size() && Lower(t[i + 1].text) == "not" && Lower(t[i + 2].text) == "null") {
        return ColumnPredicate{f->name, CompareOp::kIsNotNull, std::nullopt};
      }
      return std::nullopt;
    }
    // col op lit
    if (col && i + 2 == t.size() && t[i].kind == TokKind::kOp &&
        (t[i + 1].kind == TokKind::kNumber || t[i + 1].kind == TokKind::kString)) {
      const engine::Field* f = FindField(schema, *col);
      auto op = ParseOp(t[i].text, false);
      if (!f || !op || !LiteralFitsType(t[i + 1], f->type)) return std::nullopt;
      return ColumnPredicate{f->name, *op, t[i + 1].text};
    }
  }
  // lit op col
  if (t.size() >= 3 && (t[0].kind == TokKind::kNumber || t[0].kind == TokKind::kString) &&
      t[1].kind == TokKind::kOp) {
    size_t i = 2;
    auto col = ReadColumnRef(t, &i, alias, require_qualifier);
    if (!col || i != t.size()) return std::nullopt;
    const engine::Field* f = FindField(schema, *col);
    auto op = ParseOp(t[1].text, true);
    if (!f || !op || !LiteralFitsType(t[0], f->type)) return std::nullopt;
    return ColumnPredicate{f->name, *op, t[0].text};
  }
  return std::nullopt;
}

}  // namespace

ScanFilter ExtractPruningFilter(std::string_view condition, const engine::Schema& schema,
                                std::string_view alias, bool require_qualifier) {
  ScanFilter filter;
  auto parts = SplitConjunctsImpl(condition);
  if (!parts) return filter;
  for (const std::string& p : *parts) {
    if (auto pred = ParseConjunct(p, schema, alias, require_qualifier))
      filter.conjuncts.push_back(*pred);
  }
  return filter;
}

std::optional<std::vector<std::string>> SplitTopLevelAnd(std::string_view condition) {
  return SplitConjunctsImpl(condition);
}

Result<std::string> CandidateReadSql(const DmlTable& table, const Snapshot& snapshot,
                                     const std::vector<AddFile>& files, bool with_row_index) {
  SLUICE_ASSIGN_OR_RETURN(ReadSpec spec, ReadSpecForTable(snapshot.schema, snapshot.metadata));
  engine::Field file_col;
  file_col.name = kFileColumn;
  file_col.type.id = engine::TypeId::kVarchar;
  spec.extra_columns.push_back(file_col);
  if (with_row_index) spec.row_index_column = kRowIndexColumn;
  DeletionVectorLoader dvs(table.fs.get(), snapshot.table_root);
  std::vector<FileToRead> reads;
  reads.reserve(files.size());
  for (const AddFile& f : files) {
    SLUICE_ASSIGN_OR_RETURN(FileToRead read,
                            FileToReadForAdd(&dvs, snapshot.table_root, f, {QuoteLiteral(f.path)}));
    reads.push_back(std::move(read));
  }
  return BuildReadSql(table.conn, spec, reads);
}

std::string ColumnList(const engine::Schema& schema, std::string_view qualifier) {
  std::string out;
  for (const engine::Field& f : schema) {
    if (!out.empty()) out += ", ";
    if (!qualifier.empty()) out += std::string(qualifier) + ".";
    out += QuoteIdentifier(f.name);
  }
  return out;
}

std::string TargetAlias(std::string_view alias) {
  return alias.empty() ? "__target" : std::string(alias);
}

Result<const engine::Field*> ResolveColumn(const engine::Schema& schema, std::string_view name,
                                           std::string_view alias) {
  std::string n(name);
  // Strip surrounding spaces.
  while (!n.empty() && std::isspace(static_cast<unsigned char>(n.front()))) n.erase(n.begin());
  while (!n.empty() && std::isspace(static_cast<unsigned char>(n.back()))) n.pop_back();
  if (!alias.empty() && n.size() > alias.size() + 1 &&
      Lower(n.substr(0, alias.size())) == Lower(alias) && n[alias.size()] == '.') {
    n = n.substr(alias.size() + 1);
  }
  if (n.size() >= 2 && (n.front() == '"' || n.front() == '`') && n.back() == n.front()) {
    n = n.substr(1, n.size() - 2);
  }
  const engine::Field* f = FindField(schema, n);
  if (!f) {
    std::string cols;
    for (const engine::Field& g : schema) cols += (cols.empty() ? "" : ", ") + g.name;
    return Status::InvalidArgument("cannot resolve column '" + std::string(name) +
                                   "' in the target table (columns: " + cols + ")");
  }
  return f;
}

Result<std::optional<std::vector<bool>>> EvaluateOnPartitions(
    engine::Connection* conn, const Snapshot& snapshot, const std::vector<AddFile>& files,
    std::string_view predicate, std::string_view alias, std::string* bind_error) {
  const auto& parts = snapshot.metadata.partition_columns;
  if (parts.empty()) {
    if (bind_error) *bind_error = "the table has no partition columns";
    return std::optional<std::vector<bool>>();
  }
  std::vector<const engine::Field*> fields;
  for (const std::string& p : parts) {
    const engine::Field* f = FindField(snapshot.schema.fields, p);
    if (!f) return Status::Corruption("partition column '" + p + "' is not in the schema");
    fields.push_back(f);
  }
  // Column mapping: partitionValues are keyed by physical names.
  SLUICE_ASSIGN_OR_RETURN(engine::Schema physical,
                          PhysicalSchemaOf(snapshot.schema, snapshot.metadata));
  const std::vector<std::string> keys =
      PhysicalPartitionColumns(snapshot.schema.fields, physical, parts);
  // One row per file: (index, partition values...); an extra empty-file row keeps the types
  // bound when there are no files.
  std::string values;
  auto row_for = [&](int64_t index, const PartitionValues* pv) -> Result<std::string> {
    std::string row = "(" + std::to_string(index);
    for (size_t i = 0; i < parts.size(); ++i) {
      std::optional<std::string> v;
      if (pv) {
        auto it = pv->find(keys[i]);
        if (it == pv->end()) {
          for (const auto& [k, val] : *pv) {
            if (Lower(k) == Lower(keys[i])) v = val;
          }
        } else {
          v = it->second;
        }
      }
      SLUICE_ASSIGN_OR_RETURN(std::string expr, PartitionValueSql(v, fields[i]->type));
      row += ", " + expr;
    }
    return row + ")";
  };
  SLUICE_ASSIGN_OR_RETURN(values, row_for(-1, nullptr));
  for (size_t k = 0; k < files.size(); ++k) {
    SLUICE_ASSIGN_OR_RETURN(std::string row,
                            row_for(static_cast<int64_t>(k), &files[k].partition_values));
    values += ", " + row;
  }
  std::string cols = "__sluice_idx";
  for (const engine::Field* f : fields) cols += ", " + QuoteIdentifier(f->name);
  std::string a = QuoteIdentifier(TargetAlias(alias));
  std::string sql = "SELECT __sluice_idx, COALESCE((" + std::string(predicate) +
                    "), FALSE) FROM (VALUES " + values + ") AS " + a + "(" + cols +
                    ") WHERE __sluice_idx >= 0 ORDER BY __sluice_idx";
  auto batch = conn->Query(sql);
  if (!batch.ok()) {
    if (bind_error) *bind_error = batch.status().message();
    return std::optional<std::vector<bool>>();
  }
  std::vector<bool> out(files.size(), false);
  for (int64_t r = 0; r < batch->num_rows(); ++r) {
    SLUICE_ASSIGN_OR_RETURN(auto idx, batch->GetInt64(r, 0));
    SLUICE_ASSIGN_OR_RETURN(auto b, batch->GetBool(r, 1));
    if (idx && *idx >= 0 && static_cast<size_t>(*idx) < out.size()) out[*idx] = b.value_or(false);
  }
  return std::optional<std::vector<bool>>(std::move(out));
}

Result<std::vector<AddFile>> WriteRowsInFiles(const DmlTable& table, Transaction* txn,
                                              const engine::Batch& rows,
                                              int64_t max_rows_per_file) {
  if (max_rows_per_file <= 0 || rows.num_rows() <= max_rows_per_file)
    return table.writer->WriteFiles(txn, rows);
  std::vector<AddFile> out;
  for (int64_t offset = 0; offset < rows.num_rows(); offset += max_rows_per_file) {
    auto written = table.writer->WriteFiles(txn, rows.Slice(offset, max_rows_per_file));
    if (!written.ok()) {
      for (const AddFile& f : out) {  // never committed
        auto p = ResolveLogPath(txn->table_root(), f.path);
        if (p.ok()) (void)table.fs->DeleteFile(*p);
      }
      return written.status();
    }
    for (AddFile& f : *written) out.push_back(std::move(f));
  }
  return out;
}

int64_t RowsPerFile(const std::vector<AddFile>& files) {
  int64_t most = 0;
  for (const AddFile& f : files) most = std::max(most, NumRecords(f).value_or(0));
  return most > 0 ? most : 1000000;
}

RemoveFile RemoveFor(const AddFile& add, int64_t deletion_timestamp_ms, bool data_change) {
  RemoveFile r;
  r.path = add.path;
  r.deletion_timestamp = deletion_timestamp_ms;
  r.data_change = data_change;
  r.extended_file_metadata = true;
  r.partition_values = add.partition_values;
  r.size = add.size;
  r.stats = add.stats;
  r.tags = add.tags;
  r.deletion_vector = add.deletion_vector;  // the entry removed is (path, DV)
  r.base_row_id = add.base_row_id;
  r.default_row_commit_version = add.default_row_commit_version;
  return r;
}

std::optional<int64_t> NumRecords(const AddFile& add) {
  if (!add.stats) return std::nullopt;
  auto j = nlohmann::json::parse(*add.stats, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto it = j.find("numRecords");
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

std::optional<int64_t> LiveRows(const AddFile& add) {
  std::optional<int64_t> n = NumRecords(add);
  if (n && add.deletion_vector) *n -= add.deletion_vector->cardinality;
  return n;
}

int64_t DmlNow(const DmlOptions& options) {
  return options.now_ms ? options.now_ms() : NowMillis();
}

std::string DmlContext(std::string_view operation, const Snapshot& snapshot) {
  return std::string(operation) + " on Delta table " + snapshot.table_root + " at version " +
         snapshot.version.ToString();
}

std::string JsonString(std::string_view s) { return nlohmann::json(std::string(s)).dump(); }

Result<DmlResult> CommitDml(const DmlTable& table, Transaction* txn, const DmlOptions& options,
                            const std::string& operation,
                            const std::map<std::string, std::string>& parameters_json,
                            const std::map<std::string, int64_t>& metrics, bool commit_empty) {
  DmlResult result;
  result.metrics = metrics;
  for (const Action& a : txn->actions()) {
    if (const auto* add = std::get_if<AddFile>(&a)) result.added_files.push_back(add->path);
    if (const auto* rm = std::get_if<RemoveFile>(&a)) result.removed_files.push_back(rm->path);
    if (const auto* cdc = std::get_if<AddCdcFile>(&a)) {
      result.cdc_files.push_back(cdc->path);
      auto p = ResolveLogPath(txn->table_root(), cdc->path);
      if (p.ok()) txn->RecordWrittenFile(*p);  // cdc files are always new
    }
  }
  if (txn->actions().empty() && !commit_empty) return result;
  if (options.txn) txn->Add(*options.txn);
  txn->SetOperation(operation, parameters_json);
  for (const auto& [k, v] : metrics) txn->AddMetric(k, v);
  Status hook = options.before_commit ? options.before_commit() : Status::OK();
  if (!hook.ok()) {
    // Never committed: the files this transaction wrote are garbage.
    for (const std::string& p : txn->written_files()) (void)table.fs->DeleteFile(p);
    return hook;
  }
  // On Conflict the writer deletes txn->written_files() (and nothing else).
  SLUICE_ASSIGN_OR_RETURN(CommitResult committed, table.writer->Commit(txn));
  result.version = committed.version;
  return result;
}

Result<engine::Batch> QueryCtx(engine::Connection* conn, const std::string& sql,
                               const std::string& ctx) {
  auto b = conn->Query(sql);
  if (!b.ok()) return b.status().WithContext(ctx);
  return b;
}

}  // namespace sluice::delta
