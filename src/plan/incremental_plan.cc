#include "plan/incremental_plan.h"

#include "dialect/tokenizer.h"

namespace sluice::plan {

using dialect::Token;
using dialect::Tokenize;
using dialect::TokenKind;

bool IsSelectStarFrom(std::string_view sql, std::string_view table) {
  auto tokens = Tokenize(sql);
  if (!tokens.ok()) return false;
  const std::vector<Token>& t = *tokens;
  auto is_name = [](const Token& token) {
    return token.kind == TokenKind::kWord || token.kind == TokenKind::kQuotedIdent;
  };
  if (!(t.size() >= 5 && t[0].IsKeyword("select") && t[1].IsSymbol("*") && t[2].IsKeyword("from") &&
        is_name(t[3]) && t[3].text == table)) {
    return false;
  }
  size_t i = 4;
  // An alias (`AS name`, or a bare name that ends the statement) renames nothing SELECT * returns.
  // A clause word there would be invalid SQL: leave it to the engine to report.
  auto is_clause_word = [](const Token& token) {
    for (const char* word : {"as", "where", "group", "having", "qualify", "window", "order",
                             "limit", "offset", "union", "except", "intersect", "using", "join"}) {
      if (token.IsKeyword(word)) return true;
    }
    return false;
  };
  if (t[i].IsKeyword("as") && is_name(t[i + 1])) {
    i += 2;
  } else if (is_name(t[i]) && !is_clause_word(t[i])) {
    i += 1;
  }
  if (t[i].IsSymbol(";")) ++i;
  return t[i].kind == TokenKind::kEnd;
}

Status SqlPlan::Open(const PlanContext& context) {
  if (context.engine == nullptr) return Status::InvalidArgument("SqlPlan: no engine");
  SLUICE_ASSIGN_OR_RETURN(conn_, context.engine->Connect());
  context_prepare_ = context.prepare_connection;
  return Status::OK();
}

Result<PlanOutput> SqlPlan::Execute(const PlanInput& input) {
  const std::string ctx = "running the query of batch " + input.batch_id.ToString();
  if (conn_ == nullptr) return Status::Internal("SqlPlan::Execute before Open");
  if (input.sources.size() != num_sources_) {
    return Status::Internal(ctx + ": " + std::to_string(input.sources.size()) +
                            " source batches for a plan with " + std::to_string(num_sources_) +
                            " sources");
  }
  PlanOutput out;
  if (identity_) {
    out.rows = input.sources[0];
    return out;
  }
  for (size_t i = 0; i < input.sources.size(); ++i) {
    SLUICE_RETURN_NOT_OK_CTX(conn_->RegisterBatch(engine::SourceTableName(i), input.sources[i]),
                             ctx + ", registering source " + std::to_string(i));
  }
  if (context_prepare_) SLUICE_RETURN_NOT_OK_CTX(context_prepare_(*conn_), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(out.rows, conn_->Query(sql_), ctx);
  return out;
}

}  // namespace sluice::plan
