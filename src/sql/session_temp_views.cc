#include "sql/session_temp_views.h"

#include "common/strings.h"
#include "dialect/token_edits.h"
#include "dialect/tokenizer.h"

namespace sluice::sql {

namespace {

using dialect::Token;
using dialect::TokenKind;

using dialect::IsName;

// The view name of CREATE [OR REPLACE] TEMP|TEMPORARY VIEW [IF NOT EXISTS] name ... (*create
// true) or DROP VIEW [IF EXISTS] name (*create false); nullopt for any other statement and for
// a qualified name (not a session's temporary view).
std::optional<std::string> ViewStatementName(const std::vector<Token>& tokens, bool* create) {
  size_t i = 0;
  auto keyword = [&](std::string_view k) {
    if (i < tokens.size() && tokens[i].IsKeyword(k)) {
      ++i;
      return true;
    }
    return false;
  };
  if (keyword("create")) {
    *create = true;
    if (keyword("or") && !keyword("replace")) return std::nullopt;
    if (!keyword("temp") && !keyword("temporary")) return std::nullopt;
    if (!keyword("view")) return std::nullopt;
    if (keyword("if") && !(keyword("not") && keyword("exists"))) return std::nullopt;
  } else if (keyword("drop")) {
    *create = false;
    if (!keyword("view")) return std::nullopt;
    if (keyword("if") && !keyword("exists")) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (i + 1 >= tokens.size() || !IsName(tokens[i]) || tokens[i + 1].IsSymbol(".")) {
    return std::nullopt;
  }
  return AsciiLower(tokens[i].text);
}

}  // namespace

Result<std::optional<std::string>> SessionTempViews::CreatedView(std::string_view statement) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens, dialect::Tokenize(statement));
  bool create = false;
  std::optional<std::string> name = ViewStatementName(tokens, &create);
  if (!create) return std::optional<std::string>();
  return name;
}

bool SessionTempViews::Contains(const std::string& name) const {
  return views_.count(AsciiLower(name)) > 0;
}

Result<std::set<std::string>> SessionTempViews::ViewsNamed(std::string_view statement,
                                                           const std::string& except) const {
  std::set<std::string> out;
  if (views_.empty()) return out;
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens, dialect::Tokenize(statement));
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (!IsName(t)) continue;
    if (i > 0 && tokens[i - 1].IsSymbol(".")) continue;  // a qualified name's second part
    if (tokens[i + 1].IsSymbol("(")) continue;           // a function call
    std::string lower = AsciiLower(t.text);
    if (lower != except && views_.count(lower)) out.insert(std::move(lower));
  }
  return out;
}

Result<std::vector<DeltaReference>> SessionTempViews::ReferencesRead(
    std::string_view statement) const {
  SLUICE_ASSIGN_OR_RETURN(std::set<std::string> pending, ViewsNamed(statement, ""));
  std::set<std::string> visited;
  std::set<std::string> view_names;
  std::vector<DeltaReference> out;
  while (!pending.empty()) {  // each view once: a cycle of views ends here
    std::string name = *pending.begin();
    pending.erase(pending.begin());
    if (!visited.insert(name).second) continue;
    const View& view = views_.at(name);
    for (const DeltaReference& ref : view.references) {
      if (view_names.insert(ref.view_name).second) out.push_back(ref);
    }
    for (const std::string& inner : view.views) {
      if (views_.count(inner) && !visited.count(inner)) pending.insert(inner);
    }
  }
  return out;
}

Status SessionTempViews::AfterStatement(std::string_view statement,
                                        const std::vector<DeltaReference>& references) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<Token> tokens, dialect::Tokenize(statement));
  bool create = false;
  std::optional<std::string> name = ViewStatementName(tokens, &create);
  if (!name) return Status::OK();
  if (!create) {
    views_.erase(*name);
    return Status::OK();
  }
  View view;
  view.references = references;
  SLUICE_ASSIGN_OR_RETURN(view.views, ViewsNamed(statement, *name));
  views_[*name] = std::move(view);
  return Status::OK();
}

}  // namespace sluice::sql
