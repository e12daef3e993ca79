#include "sql/pipeline_references.h"

#include <algorithm>
#include <set>

#include "dialect/token_edits.h"
#include "dialect/tokenizer.h"
#include "engine/relation_names.h"
#include "plan/stream_query_parser.h"
#include "sql/table_catalog.h"

namespace sluice::sql {
namespace {

using dialect::Token;
using dialect::TokenKind;

void AddOnce(std::vector<std::string>* names, const std::string& name) {
  const std::string n = NormalizeTableName(name);
  if (std::find(names->begin(), names->end(), n) == names->end()) names->push_back(n);
}

using dialect::IsName;

// The batch relations of `sql` (a query whose STREAM relations are already views).
Status AddBatchReads(std::string_view sql, QueryReads* reads) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens,
                          dialect::Tokenize(sql, dialect::Lexing::kSpark));
  // CTE names: `name AS (` or `name (cols) AS (` after WITH or a ',' of its list.
  std::set<std::string> ctes;
  for (size_t i = 0; i + 2 < tokens.size(); ++i) {
    if (!IsName(tokens[i])) continue;
    size_t j = i + 1;
    if (tokens[j].IsSymbol("(")) {
      while (j < tokens.size() && !tokens[j].IsSymbol(")")) ++j;
      ++j;
    }
    if (j + 1 < tokens.size() && tokens[j].IsKeyword("as") && tokens[j + 1].IsSymbol("(") &&
        i > 0 &&
        (tokens[i - 1].IsKeyword("with") || tokens[i - 1].IsSymbol(",") ||
         tokens[i - 1].IsKeyword("recursive"))) {
      ctes.insert(NormalizeTableName(tokens[i].text));
    }
  }
  SubqueryParentheses parens;
  // tokens[k], or the final kEnd past the end.
  auto at = [&tokens](size_t k) -> const Token& { return tokens[std::min(k, tokens.size() - 1)]; };
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (parens.Step(t, at(i + 1))) continue;
    if (t.IsKeyword("table_changes") && at(i + 1).IsSymbol("(") &&
        at(i + 2).kind == TokenKind::kString) {
      AddOnce(&reads->tables, at(i + 2).text);
      continue;
    }
    if (!t.IsKeyword("from") && !t.IsKeyword("join")) continue;
    if (!parens.AtQueryLevel()) continue;
    // a IS [NOT] DISTINCT FROM b compares values.
    if (t.IsKeyword("from") && i >= 2 && tokens[i - 1].IsKeyword("distinct") &&
        (tokens[i - 2].IsKeyword("is") || tokens[i - 2].IsKeyword("not"))) {
      continue;
    }
    const Token& name = at(i + 1);
    if (!IsName(name) || at(i + 2).IsSymbol("(") || at(i + 2).IsSymbol(".")) continue;
    if (name.kind == TokenKind::kWord && (name.IsKeyword("stream") || name.IsKeyword("lateral") ||
                                          name.IsKeyword("values") || name.IsKeyword("unnest"))) {
      continue;
    }
    const std::string n = NormalizeTableName(name.text);
    if (engine::HasStreamViewPrefix(n) || ctes.count(n) > 0) continue;
    AddOnce(&reads->tables, name.text);
  }
  return Status::OK();
}

}  // namespace

Result<QueryReads> ReadsOfQuery(std::string_view query) {
  QueryReads reads;
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens,
                          dialect::Tokenize(query, dialect::Lexing::kSpark));
  const bool has_stream = std::any_of(tokens.begin(), tokens.end(),
                                      [](const Token& t) { return t.IsKeyword("stream"); });
  if (!has_stream) {
    SLUICE_RETURN_NOT_OK(AddBatchReads(query, &reads));
    return reads;
  }
  SLUICE_ASSIGN_OR_RETURN(plan::ParsedStreamingQuery parsed, plan::ParseStreamingQuery(query));
  for (const plan::StreamRelation& s : parsed.streams) {
    if (s.kind == plan::StreamRelation::Kind::kTable ||
        s.kind == plan::StreamRelation::Kind::kTableChanges) {
      // A dotted name (delta.`/path`, db.t) is the source resolver's to check.
      if (s.table.find('.') == std::string::npos) AddOnce(&reads.streams, s.table);
    }
  }
  SLUICE_RETURN_NOT_OK(AddBatchReads(parsed.sql, &reads));
  return reads;
}

bool SubqueryParentheses::Step(const Token& t, const Token& next) {
  if (t.IsSymbol("(")) {
    open_.push_back(next.IsKeyword("select") || next.IsKeyword("with") || next.IsKeyword("from"));
    return true;
  }
  if (t.IsSymbol(")")) {
    if (!open_.empty()) open_.pop_back();
    return true;
  }
  return false;
}

}  // namespace sluice::sql
