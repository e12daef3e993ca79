#include "delta/dml_merge.h"

#include <cctype>
#include <map>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "delta/cdc_writer.h"
#include "delta/changes.h"
#include "delta/dml_deletion_vectors.h"
#include "delta/values.h"

namespace sluice::delta {

namespace {

constexpr char kSrcView[] = "__sluice_merge_src";
constexpr char kTgtView[] = "__sluice_merge_tgt";
constexpr char kResultView[] = "__sluice_merge_r";
constexpr char kInsertView[] = "__sluice_merge_ins";

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Drops the temporary views on every exit path.
class ViewGuard {
 public:
  explicit ViewGuard(engine::Connection* conn) : conn_(conn) {}
  ~ViewGuard() {
    for (const char* v : {kSrcView, kTgtView, kResultView, kInsertView})
      (void)conn_->UnregisterBatch(v);
  }

 private:
  engine::Connection* conn_;
};

bool IsQueryText(std::string_view sql) {
  size_t i = 0;
  while (i < sql.size() && (std::isspace(static_cast<unsigned char>(sql[i])) || sql[i] == '(')) ++i;
  std::string head;
  while (i < sql.size() && std::isalpha(static_cast<unsigned char>(sql[i]))) head += sql[i++];
  head = Lower(head);
  return head == "select" || head == "with" || head == "values" || head == "from" ||
         head == "table";
}

const char* KindName(MergeClauseKind k) {
  switch (k) {
    case MergeClauseKind::kMatched:
      return "WHEN MATCHED";
    case MergeClauseKind::kNotMatched:
      return "WHEN NOT MATCHED";
    case MergeClauseKind::kNotMatchedBySource:
      return "WHEN NOT MATCHED BY SOURCE";
  }
  return "";
}

// A clause resolved to SQL: its condition and, per target column, its value expression.
struct ResolvedClause {
  const MergeClause* clause;
  std::string condition;  // "TRUE" when unconditional
  bool is_delete = false;
  std::map<std::string, std::string> values;  // target column -> SQL (already cast)
};

// CASE WHEN c1 THEN 1 WHEN c2 THEN 2 ... ELSE 0 END ("0" without clauses).
std::string ActionCase(const std::vector<ResolvedClause>& clauses) {
  if (clauses.empty()) return "0";
  std::string s = "CASE";
  for (size_t k = 0; k < clauses.size(); ++k) {
    s += " WHEN " + clauses[k].condition + " THEN " + std::to_string(k + 1);
  }
  return s + " ELSE 0 END";
}

// CASE <action> WHEN k THEN <value of column in clause k> ... ELSE <otherwise> END.
std::string ValueCase(const std::string& action, const std::vector<ResolvedClause>& clauses,
                      const std::string& column, const std::string& otherwise) {
  std::string s;
  for (size_t k = 0; k < clauses.size(); ++k) {
    auto it = clauses[k].values.find(column);
    if (clauses[k].is_delete || it == clauses[k].values.end()) continue;
    s += " WHEN " + std::to_string(k + 1) + " THEN " + it->second;
  }
  if (s.empty()) return otherwise;
  return "CASE " + action + s + " ELSE " + otherwise + " END";
}

std::string ClausesJson(const std::vector<ResolvedClause>& clauses) {
  nlohmann::json arr = nlohmann::json::array();
  for (const ResolvedClause& c : clauses) {
    nlohmann::json o;
    if (c.clause->condition) o["predicate"] = *c.clause->condition;
    switch (c.clause->action) {
      case MergeActionKind::kUpdate:
        o["actionType"] = "update";
        break;
      case MergeActionKind::kUpdateAll:
        o["actionType"] = "update";
        break;
      case MergeActionKind::kDelete:
        o["actionType"] = "delete";
        break;
      case MergeActionKind::kInsert:
        o["actionType"] = "insert";
        break;
      case MergeActionKind::kInsertAll:
        o["actionType"] = "insert";
        break;
    }
    arr.push_back(o);
  }
  return JsonString(arr.dump());
}

bool OrderableForPruning(engine::TypeId id) {
  switch (id) {
    case engine::TypeId::kTinyInt:
    case engine::TypeId::kSmallInt:
    case engine::TypeId::kInteger:
    case engine::TypeId::kBigInt:
    case engine::TypeId::kDecimal:
    case engine::TypeId::kVarchar:
    case engine::TypeId::kDate:
      return true;
    default:
      return false;
  }
}

std::string StripIdent(std::string s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '`') && s.back() == s.front())
    s = s.substr(1, s.size() - 2);
  return s;
}

struct MergePlan {
  std::vector<ResolvedClause> matched, not_matched, by_source;
};

Result<MergePlan> ResolveClauses(const MergeSpec& spec, const engine::Schema& target,
                                 const engine::Schema& source) {
  MergePlan plan;
  const std::string ta = QuoteIdentifier(spec.target_alias);
  const std::string sa = QuoteIdentifier(spec.source_alias);
  if (spec.clauses.empty()) {
    return Status::InvalidArgument("MERGE needs at least one WHEN clause");
  }
  // Only the last clause of each kind may be unconditional.
  std::map<MergeClauseKind, std::vector<const MergeClause*>> by_kind;
  for (const MergeClause& c : spec.clauses) by_kind[c.kind].push_back(&c);
  for (const auto& [kind, list] : by_kind) {
    for (size_t i = 0; i + 1 < list.size(); ++i) {
      if (!list[i]->condition) {
        return Status::InvalidArgument(std::string("when there are more than one ") +
                                       KindName(kind) +
                                       " clauses in a MERGE statement, only the last " +
                                       KindName(kind) + " clause can omit the condition");
      }
    }
  }
  auto find_source = [&](const std::string& name) -> const engine::Field* {
    for (const engine::Field& f : source) {
      if (Lower(f.name) == Lower(name)) return &f;
    }
    return nullptr;
  };
  for (const MergeClause& c : spec.clauses) {
    ResolvedClause r;
    r.clause = &c;
    r.condition = c.condition ? "COALESCE((" + *c.condition + "), FALSE)" : "TRUE";
    const bool insert =
        c.action == MergeActionKind::kInsert || c.action == MergeActionKind::kInsertAll;
    if ((c.kind == MergeClauseKind::kNotMatched) != insert) {
      return Status::InvalidArgument(std::string(KindName(c.kind)) + " clauses cannot " +
                                     (insert ? "INSERT" : "UPDATE or DELETE"));
    }
    if (c.kind == MergeClauseKind::kNotMatchedBySource && c.action == MergeActionKind::kUpdateAll) {
      return Status::InvalidArgument("WHEN NOT MATCHED BY SOURCE clauses cannot UPDATE SET *");
    }
    switch (c.action) {
      case MergeActionKind::kDelete:
        r.is_delete = true;
        break;
      case MergeActionKind::kUpdate:
      case MergeActionKind::kInsert:
        if (c.assignments.empty()) {
          return Status::InvalidArgument(std::string(KindName(c.kind)) +
                                         " clause has no assignments");
        }
        for (const auto& [col, expr] : c.assignments) {
          SLUICE_ASSIGN_OR_RETURN(const engine::Field* f,
                                  ResolveColumn(target, col, spec.target_alias));
          if (r.values.count(f->name)) {
            return Status::InvalidArgument("column '" + f->name +
                                           "' is assigned more than once in a " + KindName(c.kind) +
                                           " clause");
          }
          r.values[f->name] = "CAST((" + expr + ") AS " + f->type.ToSql() + ")";
        }
        break;
      case MergeActionKind::kUpdateAll:
      case MergeActionKind::kInsertAll:
        for (const engine::Field& f : target) {
          const engine::Field* s = find_source(f.name);
          if (!s) {
            std::string cols;
            for (const engine::Field& g : source)
              cols += (cols.empty() ? "" : ", ") + spec.source_alias + "." + g.name;
            return Status::InvalidArgument("cannot resolve " + spec.target_alias + "." + f.name +
                                           " in " + (insert ? "INSERT *" : "UPDATE SET *") +
                                           " given columns " + cols);
          }
          r.values[f.name] =
              "CAST(" + sa + "." + QuoteIdentifier(s->name) + " AS " + f.type.ToSql() + ")";
        }
        break;
    }
    switch (c.kind) {
      case MergeClauseKind::kMatched:
        plan.matched.push_back(std::move(r));
        break;
      case MergeClauseKind::kNotMatched:
        plan.not_matched.push_back(std::move(r));
        break;
      case MergeClauseKind::kNotMatchedBySource:
        plan.by_source.push_back(std::move(r));
        break;
    }
  }
  (void)ta;
  return plan;
}

// Candidate pruning: `t.col op literal` conjuncts plus [min, max] of the source side of each
// `t.col = s.col` conjunct. Sets *no_match when some equi-key has no non-null source value.
Result<ScanFilter> MergePruningFilter(engine::Connection* conn, const MergeSpec& spec,
                                      const engine::Schema& target, bool* no_match) {
  *no_match = false;
  ScanFilter filter =
      ExtractPruningFilter(spec.on, target, spec.target_alias, /*require_qualifier=*/true);
  auto parts = SplitTopLevelAnd(spec.on);
  if (!parts) return filter;
  static const std::regex kEqui(
      R"(^\s*("[^"]+"|`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)\s*\.\s*("[^"]+"|`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)\s*==?\s*)"
      R"(("[^"]+"|`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)\s*\.\s*("[^"]+"|`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)\s*$)");
  for (const std::string& p : *parts) {
    std::smatch m;
    if (!std::regex_match(p, m, kEqui)) continue;
    std::string q1 = StripIdent(m[1]), c1 = StripIdent(m[2]), q2 = StripIdent(m[3]),
                c2 = StripIdent(m[4]);
    std::string tcol, scol;
    if (Lower(q1) == Lower(spec.target_alias) && Lower(q2) == Lower(spec.source_alias)) {
      tcol = c1;
      scol = c2;
    } else if (Lower(q2) == Lower(spec.target_alias) && Lower(q1) == Lower(spec.source_alias)) {
      tcol = c2;
      scol = c1;
    } else {
      continue;
    }
    const engine::Field* f = nullptr;
    for (const engine::Field& g : target) {
      if (Lower(g.name) == Lower(tcol)) f = &g;
    }
    if (!f || !OrderableForPruning(f->type.id)) continue;
    const std::string v = "CAST(" + QuoteIdentifier(scol) + " AS " + f->type.ToSql() + ")";
    auto mm = conn->Query("SELECT min(" + v + "), max(" + v + ") FROM " + kSrcView);
    if (!mm.ok()) continue;  // e.g. a cast that fails: no pruning by this key
    auto lo = mm->GetString(0, 0);
    auto hi = mm->GetString(0, 1);
    if (!lo || !hi) {
      *no_match = true;  // no source row has a non-null key: nothing can match
      continue;
    }
    filter.conjuncts.push_back(ColumnPredicate{f->name, CompareOp::kGe, *lo});
    filter.conjuncts.push_back(ColumnPredicate{f->name, CompareOp::kLe, *hi});
  }
  return filter;
}

}  // namespace

Result<DmlResult> MergeInto(const DmlTable& table, const MergeSpec& spec,
                            const DmlOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> txn, table.writer->StartTransaction());
  const Snapshot& snap = *txn->read_snapshot();
  const std::string ctx = DmlContext("MERGE", snap);
  const engine::Schema& schema = snap.schema.fields;
  engine::Connection* conn = table.conn;
  if (spec.on.empty())
    return Status::InvalidArgument("MERGE needs an ON condition").WithContext(ctx);
  if (spec.target_alias.empty() || spec.source_alias.empty() ||
      Lower(spec.target_alias) == Lower(spec.source_alias)) {
    return Status::InvalidArgument("MERGE needs two distinct aliases for target and source")
        .WithContext(ctx);
  }
  const std::string ta = QuoteIdentifier(spec.target_alias);
  const std::string sa = QuoteIdentifier(spec.source_alias);
  const std::string on = "(" + spec.on + ")";
  ViewGuard guard(conn);

  // The source, materialized once.
  engine::Batch source;
  if (spec.source_batch) {
    source = *spec.source_batch;
  } else {
    const std::string sql = IsQueryText(spec.source_sql) ? "SELECT * FROM (" + spec.source_sql + ")"
                                                         : "SELECT * FROM " + spec.source_sql;
    SLUICE_ASSIGN_OR_RETURN(source, QueryCtx(conn, sql, ctx + ": reading the MERGE source"));
  }
  SLUICE_RETURN_NOT_OK_CTX(conn->RegisterBatch(kSrcView, source), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(MergePlan plan, ResolveClauses(spec, schema, source.schema()), ctx);
  const std::string matched_case = ActionCase(plan.matched);
  const std::string by_source_case = ActionCase(plan.by_source);
  const std::string insert_case = ActionCase(plan.not_matched);

  std::map<std::string, std::string> params{
      {"predicate", JsonString("[" + JsonString(spec.on) + "]")},
      {"matchedPredicates", ClausesJson(plan.matched)},
      {"notMatchedPredicates", ClausesJson(plan.not_matched)},
      {"notMatchedBySourcePredicates", ClausesJson(plan.by_source)}};
  std::map<std::string, int64_t> m;
  for (const char* k :
       {"numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsMatchedUpdated",
        "numTargetRowsNotMatchedBySourceUpdated", "numTargetRowsDeleted",
        "numTargetRowsMatchedDeleted", "numTargetRowsNotMatchedBySourceDeleted",
        "numTargetRowsCopied", "numOutputRows", "numTargetFilesAdded", "numTargetFilesRemoved",
        "numTargetChangeFilesAdded", "numTargetBytesAdded", "numTargetBytesRemoved"}) {
    m[k] = 0;
  }
  m["numSourceRows"] = source.num_rows();

  // Candidate target files.
  std::vector<AddFile> candidates;
  if (!plan.by_source.empty()) {
    candidates = snap.files;
    txn->ReadWholeTable();
  } else {
    bool no_match = false;
    SLUICE_ASSIGN_OR_RETURN_CTX(ScanFilter filter,
                                MergePruningFilter(conn, spec, schema, &no_match), ctx);
    if (!no_match) {
      SLUICE_ASSIGN_OR_RETURN_CTX(candidates, PlanScanFiles(snap, filter), ctx);
    }
    for (const AddFile& f : candidates) txn->ReadFile(f.path);
  }
  // With deletion vectors: the target rows a clause updates or deletes are marked in their files'
  // DVs, and only updated and inserted rows are written.
  const bool dvs = WritesDeletionVectors(snap);
  std::string candidate_sql;
  if (!candidates.empty()) {
    SLUICE_ASSIGN_OR_RETURN_CTX(candidate_sql, CandidateReadSql(table, snap, candidates), ctx);
  }
  const std::string file_col = std::string(kFileColumn);

  // Files holding target rows that some clause modifies.
  std::set<std::string> touched_paths;
  if (!candidates.empty() && (!plan.matched.empty() || !plan.by_source.empty())) {
    std::string q;
    if (!plan.matched.empty()) {
      q = "SELECT DISTINCT " + ta + "." + file_col + " FROM (" + candidate_sql + ") AS " + ta +
          " JOIN " + kSrcView + " AS " + sa + " ON " + on + " WHERE (" + matched_case + ") <> 0";
    }
    if (!plan.by_source.empty()) {
      if (!q.empty()) q += " UNION ";
      q += "SELECT " + ta + "." + file_col + " FROM (" + candidate_sql + ") AS " + ta + " WHERE (" +
           by_source_case + ") <> 0 AND NOT EXISTS (SELECT 1 FROM " + kSrcView + " AS " + sa +
           " WHERE " + on + ")";
    }
    SLUICE_ASSIGN_OR_RETURN(engine::Batch hits,
                            QueryCtx(conn, q, ctx + ": finding the files to rewrite"));
    for (int64_t r = 0; r < hits.num_rows(); ++r)
      touched_paths.insert(hits.GetString(r, 0).value_or(""));
  }

  // Inserted rows: source rows matching no target row.
  std::optional<engine::Batch> inserted;
  if (!plan.not_matched.empty()) {
    std::string cols;
    for (const engine::Field& f : schema) {
      if (!cols.empty()) cols += ", ";
      cols += ValueCase("__sluice_a", plan.not_matched, f.name,
                        "CAST(NULL AS " + f.type.ToSql() + ")") +
              " AS " + QuoteIdentifier(f.name);
    }
    std::string inner =
        "SELECT " + sa + ".*, (" + insert_case + ") AS __sluice_a FROM " + kSrcView + " AS " + sa;
    if (!candidates.empty()) {
      inner += " WHERE NOT EXISTS (SELECT 1 FROM (" + candidate_sql + ") AS " + ta + " WHERE " +
               on + ")";
    }
    SLUICE_ASSIGN_OR_RETURN(engine::Batch ins, QueryCtx(conn,
                                                        "SELECT " + cols + " FROM (" + inner +
                                                            ") AS " + sa + " WHERE __sluice_a <> 0",
                                                        ctx + ": computing inserted rows"));
    SLUICE_RETURN_NOT_OK_CTX(conn->RegisterBatch(kInsertView, ins), ctx);
    inserted = ins;
    m["numTargetRowsInserted"] = ins.num_rows();
  }

  std::vector<AddFile> touched;
  for (const AddFile& f : candidates) {
    if (touched_paths.count(f.path)) touched.push_back(f);
  }
  if (touched.empty() && (!inserted || inserted->num_rows() == 0)) {
    return CommitDml(table, txn.get(), options, "MERGE", params, m);  // nothing changes: no commit
  }

  // The rows of the touched files, each with its action and new values.
  const std::string ct = std::string(" AS ") + kChangeTypeColumn;
  std::string new_cols;  // __sluice_n<i> AS col, for the output
  for (size_t i = 0; i < schema.size(); ++i) {
    if (!new_cols.empty()) new_cols += ", ";
    new_cols += "__sluice_n" + std::to_string(i) + " AS " + QuoteIdentifier(schema[i].name);
  }
  if (!touched.empty()) {
    SLUICE_ASSIGN_OR_RETURN_CTX(std::string touched_sql,
                                CandidateReadSql(table, snap, touched, /*with_row_index=*/dvs),
                                ctx);
    // Without NOT MATCHED BY SOURCE clauses only target rows with a matching source row can
    // change; with DVs the others are neither rewritten nor looked at again.
    std::string tgt_sql =
        "SELECT *, row_number() OVER () AS __sluice_rid FROM (" + touched_sql + ")";
    if (dvs && plan.by_source.empty()) {
      tgt_sql = "SELECT " + ta + ".*, row_number() OVER () AS __sluice_rid FROM (" + touched_sql +
                ") AS " + ta + " WHERE EXISTS (SELECT 1 FROM " + kSrcView + " AS " + sa +
                " WHERE " + on + ")";
    }
    SLUICE_ASSIGN_OR_RETURN(engine::Batch tgt, QueryCtx(conn, tgt_sql, ctx));
    SLUICE_RETURN_NOT_OK_CTX(conn->RegisterBatch(kTgtView, tgt), ctx);
    const std::string tgt_from = std::string(kTgtView) + " AS " + ta;

    // Several source rows modifying one target row is an error (unless the only MATCHED clause
    // is an unconditional DELETE).
    const bool only_unconditional_delete =
        plan.matched.size() == 1 && plan.matched[0].is_delete && !plan.matched[0].clause->condition;
    if (!plan.matched.empty() && !only_unconditional_delete) {
      SLUICE_ASSIGN_OR_RETURN(
          engine::Batch dup,
          QueryCtx(conn,
                   "SELECT count(*) FROM (SELECT " + ta + ".__sluice_rid FROM " + tgt_from +
                       " JOIN " + kSrcView + " AS " + sa + " ON " + on + " WHERE (" + matched_case +
                       ") <> 0 GROUP BY 1 HAVING count(*) > 1)",
                   ctx));
      SLUICE_ASSIGN_OR_RETURN(auto n, dup.GetInt64(0, 0));
      if (n.value_or(0) > 0) {
        return Status::InvalidArgument(
                   std::string(kMergeMultipleMatchMessage) +
                   " in the Delta table in possibly conflicting ways. By SQL semantics of Merge, "
                   "when multiple "
                   "source rows match on the same target row, the result may be ambiguous as it is "
                   "unclear which "
                   "source row should be used to update or delete the matching target row. You can "
                   "preprocess "
                   "the source table to eliminate the possibility of multiple matches. (" +
                   std::to_string(*n) + " target rows matched more than once)")
            .WithContext(ctx);
      }
    }

    std::string m_vals, kind_case, out_vals;
    for (size_t i = 0; i < schema.size(); ++i) {
      const std::string old = ta + "." + QuoteIdentifier(schema[i].name);
      const std::string v = "__sluice_v" + std::to_string(i);
      m_vals += ", " + ValueCase("(" + matched_case + ")", plan.matched, schema[i].name, old) +
                " AS " + v;
      out_vals += ", CASE WHEN __m.__rid IS NOT NULL THEN __m." + v +
                  " WHEN __hit.__rid IS NOT NULL THEN " + old + " ELSE " +
                  ValueCase("(" + by_source_case + ")", plan.by_source, schema[i].name, old) +
                  " END AS __sluice_n" + std::to_string(i);
    }
    std::string matched_kind = "CASE __m.__a";
    for (size_t k = 0; k < plan.matched.size(); ++k) {
      matched_kind += " WHEN " + std::to_string(k + 1) + " THEN '" +
                      (plan.matched[k].is_delete ? "md" : "mu") + "'";
    }
    matched_kind = plan.matched.empty() ? std::string("'keep'") : matched_kind + " ELSE 'keep' END";
    std::string source_kind = "CASE (" + by_source_case + ")";
    for (size_t k = 0; k < plan.by_source.size(); ++k) {
      source_kind += " WHEN " + std::to_string(k + 1) + " THEN '" +
                     (plan.by_source[k].is_delete ? "nd" : "nu") + "'";
    }
    source_kind = plan.by_source.empty() ? std::string("'keep'") : source_kind + " ELSE 'keep' END";
    kind_case = "CASE WHEN __m.__rid IS NOT NULL THEN " + matched_kind +
                " WHEN __hit.__rid IS NOT NULL THEN 'keep' ELSE " + source_kind +
                " END AS __sluice_kind";

    const std::string r_sql =
        "WITH __m_all AS (SELECT " + ta + ".__sluice_rid AS __rid, (" + matched_case + ") AS __a" +
        m_vals + " FROM " + tgt_from + " JOIN " + kSrcView + " AS " + sa + " ON " + on +
        "), __m AS (SELECT * FROM __m_all WHERE __a <> 0 QUALIFY row_number() OVER (PARTITION BY "
        "__rid) = 1), "
        "__hit AS (SELECT DISTINCT __rid FROM __m_all) SELECT " +
        ColumnList(schema, ta) + ", " + kind_case + out_vals +
        (dvs ? ", " + ta + "." + kFileColumn + ", " + ta + "." + kRowIndexColumn : "") + " FROM " +
        tgt_from + " LEFT JOIN __m ON " + ta + ".__sluice_rid = __m.__rid LEFT JOIN __hit ON " +
        ta + ".__sluice_rid = __hit.__rid ORDER BY " + ta +
        ".__sluice_rid";  // keep the files' row order (and so their clustering) in the rewrite
    SLUICE_ASSIGN_OR_RETURN(engine::Batch r,
                            QueryCtx(conn, r_sql, ctx + ": applying the MERGE clauses"));
    SLUICE_RETURN_NOT_OK_CTX(conn->RegisterBatch(kResultView, r), ctx);
    SLUICE_ASSIGN_OR_RETURN(
        engine::Batch counts,
        QueryCtx(conn,
                 std::string(
                     "SELECT count(*) FILTER (WHERE __sluice_kind = 'mu'), count(*) FILTER (WHERE "
                     "__sluice_kind = 'nu'), count(*) FILTER (WHERE __sluice_kind = 'md'), "
                     "count(*) FILTER "
                     "(WHERE __sluice_kind = 'nd'), count(*) FILTER (WHERE __sluice_kind = 'keep') "
                     "FROM ") +
                     kResultView,
                 ctx));
    int64_t c[5];
    for (size_t i = 0; i < 5; ++i) {
      SLUICE_ASSIGN_OR_RETURN(auto v, counts.GetInt64(0, i));
      c[i] = v.value_or(0);
    }
    m["numTargetRowsMatchedUpdated"] = c[0];
    m["numTargetRowsNotMatchedBySourceUpdated"] = c[1];
    m["numTargetRowsUpdated"] = c[0] + c[1];
    m["numTargetRowsMatchedDeleted"] = c[2];
    m["numTargetRowsNotMatchedBySourceDeleted"] = c[3];
    m["numTargetRowsDeleted"] = c[2] + c[3];
    m["numTargetRowsCopied"] = dvs ? 0 : c[4];  // with DVs, kept rows stay where they are
  }

  // Output rows: surviving rows of the touched files + inserted rows.
  std::vector<std::string> out_parts;
  if (!touched.empty()) {
    out_parts.push_back("SELECT " + new_cols + " FROM " + kResultView +
                        (dvs ? " WHERE __sluice_kind IN ('mu', 'nu')"
                             : " WHERE __sluice_kind NOT IN ('md', 'nd')"));
  }
  if (inserted) out_parts.push_back(std::string("SELECT * FROM ") + kInsertView);
  std::string out_sql;
  for (const std::string& p : out_parts) out_sql += (out_sql.empty() ? "" : " UNION ALL ") + p;
  SLUICE_ASSIGN_OR_RETURN(engine::Batch out, QueryCtx(conn, out_sql, ctx));
  m["numOutputRows"] = out.num_rows();
  SLUICE_ASSIGN_OR_RETURN_CTX(std::vector<AddFile> adds,
                              WriteRowsInFiles(table, txn.get(), out, RowsPerFile(touched)), ctx);

  if (ChangeDataFeedEnabled(snap)) {
    std::vector<std::string> cdc_parts;
    if (!touched.empty()) {
      const std::string cols = ColumnList(schema);
      const std::string from = std::string(" FROM ") + kResultView;
      cdc_parts.push_back("SELECT " + cols + ", 'update_preimage'" + ct + from +
                          " WHERE __sluice_kind IN ('mu', 'nu')");
      cdc_parts.push_back("SELECT " + new_cols + ", 'update_postimage'" + ct + from +
                          " WHERE __sluice_kind IN ('mu', 'nu')");
      cdc_parts.push_back("SELECT " + cols + ", 'delete'" + ct + from +
                          " WHERE __sluice_kind IN ('md', 'nd')");
    }
    if (inserted)
      cdc_parts.push_back(std::string("SELECT *, 'insert'") + ct + " FROM " + kInsertView);
    std::string cdc_sql;
    for (const std::string& p : cdc_parts) cdc_sql += (cdc_sql.empty() ? "" : " UNION ALL ") + p;
    SLUICE_ASSIGN_OR_RETURN(engine::Batch changes, QueryCtx(conn, cdc_sql, ctx));
    auto cdc = WriteCdcFiles(conn, table.fs.get(), snap, changes, table.writer->sync_data_files());
    if (!cdc.ok()) return cdc.status().WithContext(ctx);
    m["numTargetChangeFilesAdded"] = static_cast<int64_t>(cdc->size());
    for (AddCdcFile& f : *cdc) txn->Add(std::move(f));
  }
  const int64_t now = DmlNow(options);
  if (dvs) {
    std::map<std::string, RowIndexSet> dv_rows;
    if (!touched.empty()) {
      SLUICE_ASSIGN_OR_RETURN(
          dv_rows, QueryRowIndexes(conn,
                                   std::string("SELECT ") + kFileColumn + ", " + kRowIndexColumn +
                                       " FROM " + kResultView + " WHERE __sluice_kind <> 'keep'",
                                   ctx));
    }
    SLUICE_ASSIGN_OR_RETURN(DeletionVectorChanges c,
                            MarkDeletedRows(table, txn.get(), snap, touched, dv_rows, now));
    m["numTargetFilesRemoved"] = c.files_removed;
    m["numTargetBytesRemoved"] = c.bytes_removed;
    m["numTargetDeletionVectorsAdded"] = c.dvs_added;
    m["numTargetDeletionVectorsUpdated"] = c.dvs_updated;
    m["numTargetDeletionVectorsRemoved"] = c.dvs_removed;
  } else {
    for (const AddFile& f : touched) {
      txn->Add(RemoveFor(f, now, true));
      m["numTargetBytesRemoved"] += f.size;
    }
    m["numTargetFilesRemoved"] = static_cast<int64_t>(touched.size());
  }
  m["numTargetFilesAdded"] = static_cast<int64_t>(adds.size());
  for (AddFile& a : adds) {
    m["numTargetBytesAdded"] += a.size;
    txn->Add(std::move(a));
  }
  return CommitDml(table, txn.get(), options, "MERGE", params, m);
}

}  // namespace sluice::delta
