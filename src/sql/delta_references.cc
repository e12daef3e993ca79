#include "sql/delta_references.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "common/strings.h"
#include "dialect/tokenizer.h"
#include "sql/literal_rows.h"

namespace sluice::sql {
namespace {

using dialect::DescribePosition;
using dialect::Token;
using dialect::Tokenize;
using dialect::TokenKind;

// Words after a relation that are not an alias.
bool IsClauseWord(const Token& t) {
  static const char* kWords[] = {
      "where",      "join",      "inner",   "left",      "right",   "full",        "cross",
      "natural",    "on",        "using",   "group",     "order",   "limit",       "offset",
      "union",      "intersect", "except",  "having",    "window",  "qualify",     "as",
      "positional", "asof",      "anti",    "semi",      "lateral", "tablesample", "version",
      "timestamp",  "pivot",     "unpivot", "returning", "set",     "values",      "select",
      "from",       "when",      "then",    "else",      "end"};
  for (const char* w : kWords) {
    if (t.IsKeyword(w)) return true;
  }
  return false;
}

// The token range [begin, end) of the table a statement names at its head, as its target: UPDATE
// <t>, DELETE FROM <t>, MERGE INTO <t>, and the table statements (DESCRIBE [HISTORY | DETAIL |
// EXTENDED] <t>, VACUUM, OPTIMIZE, REORG TABLE, ALTER TABLE, SHOW TBLPROPERTIES, SHOW CREATE TABLE,
// RESTORE, DROP, CREATE / REPLACE TABLE, INSERT INTO | OVERWRITE, TRUNCATE), <t> a name or
// delta.`path`; {0, 0} for other statements. Such a table is acted on, not read by a query.
std::pair<size_t, size_t> StatementTargetTokens(const std::vector<Token>& tokens) {
  // Each head: its keywords, then optional keywords that may follow it, in order.
  struct Head {
    std::vector<const char*> words;
    std::vector<std::vector<const char*>> optional;
  };
  static const Head kHeads[] = {
      {{"update"}, {}},
      {{"delete", "from"}, {}},
      {{"merge", "into"}, {}},
      {{"describe"}, {{"history"}, {"detail"}, {"table"}, {"extended"}, {"formatted"}}},
      {{"desc"}, {{"history"}, {"detail"}, {"table"}, {"extended"}, {"formatted"}}},
      {{"vacuum"}, {}},
      {{"optimize"}, {}},
      {{"reorg", "table"}, {}},
      {{"alter", "table"}, {}},
      {{"show", "tblproperties"}, {}},
      {{"show", "create", "table"}, {}},
      {{"restore"}, {{"table"}}},
      {{"drop", "table"}, {{"if", "exists"}}},
      {{"create"}, {{"or", "replace"}, {"table"}, {"if", "not", "exists"}}},
      {{"replace", "table"}, {}},
      {{"insert"}, {{"into"}, {"overwrite"}, {"table"}}},
      {{"truncate", "table"}, {}},
  };
  auto words_at = [&](size_t at, const std::vector<const char*>& words) {
    if (at + words.size() > tokens.size()) return false;
    for (size_t k = 0; k < words.size(); ++k) {
      if (!tokens[at + k].IsKeyword(words[k])) return false;
    }
    return true;
  };
  for (const Head& head : kHeads) {
    if (!words_at(0, head.words)) continue;
    size_t at = head.words.size();
    bool more = true;
    while (more) {
      more = false;
      for (const auto& option : head.optional) {
        if (words_at(at, option)) {
          at += option.size();
          more = true;
        }
      }
    }
    // CREATE must be CREATE [OR REPLACE] TABLE: CREATE VIEW etc. name no Delta table.
    if (head.words[0] == std::string_view("create") && !tokens[at - 1].IsKeyword("table") &&
        !tokens[at - 1].IsKeyword("exists")) {
      return {0, 0};
    }
    if (at + 2 < tokens.size() && tokens[at].IsKeyword("delta") && tokens[at + 1].IsSymbol(".") &&
        tokens[at + 2].kind == TokenKind::kBacktick) {
      return {at, at + 3};
    }
    if (at < tokens.size() &&
        (tokens[at].kind == TokenKind::kWord || tokens[at].kind == TokenKind::kQuotedIdent)) {
      return {at, at + 1};
    }
    return {0, 0};
  }
  return {0, 0};
}

std::string BaseName(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

}  // namespace

Result<RewrittenQuery> RewriteDeltaReferences(
    std::string_view sql, const std::function<bool(const std::string&)>& is_table) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(sql));
  RewrittenQuery out;
  std::set<std::string> views;
  size_t copied = 0;  // source offset up to which `sql` is already in out.sql
  auto add_reference = [&](DeltaReference ref) {
    if (views.insert(ref.view_name).second) out.references.push_back(std::move(ref));
  };
  // Replaces source [begin, end) with `text`.
  auto replace = [&](size_t begin, size_t end, const std::string& text) {
    out.sql.append(sql.substr(copied, begin - copied));
    out.sql += text;
    copied = end;
  };
  // After a relation ending at token index `next`, the alias to add unless one follows.
  auto alias_suffix = [&](size_t next, const std::string& alias) -> std::string {
    const Token& t = tokens[next];
    bool has_alias = t.IsKeyword("as") || t.kind == TokenKind::kQuotedIdent ||
                     (t.kind == TokenKind::kWord && !IsClauseWord(t));
    return has_alias ? "" : " AS " + QuoteIdentifier(alias);
  };
  // Parses VERSION AS OF n / TIMESTAMP AS OF 'x' at index i; returns the index after it, or i.
  auto time_travel = [&](size_t i, DeltaReference* ref) -> Result<size_t> {
    if (tokens[i].IsKeyword("version") && tokens[i + 1].IsKeyword("as") &&
        tokens[i + 2].IsKeyword("of")) {
      if (tokens[i + 3].kind != TokenKind::kNumber) {
        return Status::InvalidArgument("VERSION AS OF needs a version number at " +
                                       DescribePosition(sql, tokens[i + 3].begin));
      }
      ref->kind = DeltaReference::Kind::kVersion;
      ref->version = std::strtoll(tokens[i + 3].text.c_str(), nullptr, 10);
      return i + 4;
    }
    if (tokens[i].IsKeyword("timestamp") && tokens[i + 1].IsKeyword("as") &&
        tokens[i + 2].IsKeyword("of")) {
      if (tokens[i + 3].kind != TokenKind::kString) {
        return Status::InvalidArgument("TIMESTAMP AS OF needs a timestamp string at " +
                                       DescribePosition(sql, tokens[i + 3].begin));
      }
      ref->kind = DeltaReference::Kind::kTimestamp;
      ref->timestamp = tokens[i + 3].text;
      return i + 4;
    }
    return i;
  };
  auto view_name_for = [](const DeltaReference& ref, const std::string& base) {
    switch (ref.kind) {
      case DeltaReference::Kind::kVersion:
        return base + "@v" + std::to_string(*ref.version);
      case DeltaReference::Kind::kTimestamp:
        return base + "@" + *ref.timestamp;
      default:
        return base;
    }
  };

  // The target of UPDATE / DELETE / MERGE is written, not read: it gets no view (a view opens
  // every file of the table) and stays as written; the DML reads only its candidate files. The
  // table a table statement acts on (DESCRIBE HISTORY delta.`p`, VACUUM, ...) stays as written
  // too: that statement's executor opens it.
  const auto [target_begin, target_end] = StatementTargetTokens(tokens);
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (i >= target_begin && i < target_end) continue;
    const Token& t = tokens[i];
    bool after_dot = i > 0 && tokens[i - 1].IsSymbol(".");
    // delta.`path`
    if (t.IsKeyword("delta") && !after_dot && tokens[i + 1].IsSymbol(".") &&
        tokens[i + 2].kind == TokenKind::kBacktick) {
      DeltaReference ref;
      ref.table = TableName{tokens[i + 2].text, true};
      SLUICE_ASSIGN_OR_RETURN(size_t next, time_travel(i + 3, &ref));
      ref.view_name = view_name_for(ref, "delta:" + ref.table.name);
      std::string alias = BaseName(ref.table.name);
      replace(t.begin, tokens[next - 1].end,
              QuoteIdentifier(ref.view_name) + alias_suffix(next, alias));
      add_reference(std::move(ref));
      i = next - 1;
      continue;
    }
    // (DESCRIBE t) / (DESCRIBE HISTORY t) / (DESCRIBE DETAIL t) as a relation, with the same
    // columns as the statement.
    if (t.IsSymbol("(") &&
        (tokens[i + 1].IsKeyword("describe") || tokens[i + 1].IsKeyword("desc"))) {
      DeltaReference ref;
      size_t j = i + 2;
      if (tokens[j].IsKeyword("history") || tokens[j].IsKeyword("detail")) {
        ref.kind = tokens[j].IsKeyword("history") ? DeltaReference::Kind::kHistory
                                                  : DeltaReference::Kind::kDetail;
        ++j;
      } else {
        // Only (DESCRIBE [TABLE] <table>); anything else, such as (DESCRIBE SELECT ...), is
        // DuckDB's.
        ref.kind = DeltaReference::Kind::kDescribe;
        if (tokens[j].IsKeyword("table")) ++j;
        bool is_name =
            tokens[j].kind == TokenKind::kWord || tokens[j].kind == TokenKind::kQuotedIdent;
        bool is_path = tokens[j].IsKeyword("delta") && tokens[j + 1].IsSymbol(".") &&
                       tokens[j + 2].kind == TokenKind::kBacktick && tokens[j + 3].IsSymbol(")");
        if (!is_path && !(is_name && tokens[j + 1].IsSymbol(")") && !IsClauseWord(tokens[j]))) {
          continue;
        }
      }
      if (tokens[j].IsKeyword("delta") && tokens[j + 1].IsSymbol(".") &&
          tokens[j + 2].kind == TokenKind::kBacktick) {
        ref.table = TableName{tokens[j + 2].text, true};
        j += 3;
      } else if (tokens[j].kind == TokenKind::kWord || tokens[j].kind == TokenKind::kQuotedIdent) {
        ref.table = TableName{tokens[j].text, false};
        j += 1;
      } else {
        return Status::InvalidArgument("DESCRIBE needs a table name at " +
                                       DescribePosition(sql, tokens[j].begin));
      }
      const char* what = ref.kind == DeltaReference::Kind::kHistory  ? "history:"
                         : ref.kind == DeltaReference::Kind::kDetail ? "detail:"
                                                                     : "describe:";
      if (!tokens[j].IsSymbol(")")) {
        return Status::InvalidArgument("expected ')' after DESCRIBE <table> at " +
                                       DescribePosition(sql, tokens[j].begin));
      }
      ref.view_name = std::string(what) + (ref.table.is_path ? "delta:" : "") + ref.table.name;
      replace(t.begin, tokens[j].end, QuoteIdentifier(ref.view_name));
      add_reference(std::move(ref));
      i = j;
      continue;
    }
    // table_changes('t', start [, end])
    if (t.IsKeyword("table_changes") && !after_dot && tokens[i + 1].IsSymbol("(")) {
      size_t j = i + 2;
      if (tokens[j].kind != TokenKind::kString) {
        return Status::InvalidArgument(
            "table_changes needs the table name as a string, e.g. "
            "table_changes('t', 0), at " +
            DescribePosition(sql, tokens[j].begin));
      }
      DeltaReference ref;
      ref.kind = DeltaReference::Kind::kChanges;
      std::string name = tokens[j].text;
      if (name.rfind("delta.`", 0) == 0 && name.size() > 8 && name.back() == '`') {
        ref.table = TableName{name.substr(7, name.size() - 8), true};
      } else {
        ref.table = TableName{name, false};
      }
      std::vector<const Token*> args;
      j += 1;
      while (tokens[j].IsSymbol(",")) {
        const Token& a = tokens[j + 1];
        if (a.kind != TokenKind::kNumber && a.kind != TokenKind::kString) {
          return Status::InvalidArgument(
              "table_changes takes a version number or a timestamp "
              "string at " +
              DescribePosition(sql, a.begin));
        }
        args.push_back(&a);
        j += 2;
      }
      if (!tokens[j].IsSymbol(")") || args.empty() || args.size() > 2) {
        return Status::InvalidArgument("table_changes takes (table, start [, end]) at " +
                                       DescribePosition(sql, t.begin));
      }
      ref.changes_by_timestamp = args[0]->kind == TokenKind::kString;
      if (args.size() == 2 && (args[1]->kind == TokenKind::kString) != ref.changes_by_timestamp) {
        return Status::InvalidArgument(
            "table_changes: start and end must both be versions or both be timestamps");
      }
      ref.changes_start = args[0]->text;
      if (args.size() == 2) ref.changes_end = args[1]->text;
      ref.view_name = "changes:" + name + ":" + ref.changes_start +
                      (ref.changes_end ? ":" + *ref.changes_end : "");
      replace(t.begin, tokens[j].end, QuoteIdentifier(ref.view_name));
      add_reference(std::move(ref));
      i = j;
      continue;
    }
    // A plain table name.
    if ((t.kind == TokenKind::kWord || t.kind == TokenKind::kQuotedIdent) && !after_dot &&
        !tokens[i + 1].IsSymbol("(") && !tokens[i + 1].IsSymbol(".") && is_table(t.text)) {
      DeltaReference ref;
      ref.table = TableName{t.text, false};
      SLUICE_ASSIGN_OR_RETURN(size_t next, time_travel(i + 1, &ref));
      if (ref.kind == DeltaReference::Kind::kLatest) {
        ref.view_name = t.text;  // no rewrite: the view carries the table's own name
      } else {
        ref.view_name = view_name_for(ref, t.text);
        replace(t.begin, tokens[next - 1].end,
                QuoteIdentifier(ref.view_name) + alias_suffix(next, t.text));
        i = next - 1;
      }
      add_reference(std::move(ref));
    }
  }
  out.sql.append(sql.substr(copied));
  return out;
}

}  // namespace sluice::sql
