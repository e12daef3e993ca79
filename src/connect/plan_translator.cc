#include "connect/plan_translator.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>

#include "common/strings.h"
#include "connect/local_relation.h"
#include "connect/pyspark_names.h"
#include "connect/spark_types.h"
#include "dialect/tokenizer.h"
#include "spark/connect/relations.pb.h"

namespace sluice::connect {

namespace sc = spark::connect;

struct PlanTranslator::Sub {
  std::string sql;                   // a query
  std::optional<std::string> alias;  // from SubqueryAlias: the name it is read by
  std::string order_by;              // from Sort: its ORDER BY, for a Limit right above it
  std::shared_ptr<Sub> sort_input;   // from Sort: its input, for a Limit right above it
  // The plan ids whose columns this relation's output keeps (its own, and its input's for the
  // relations that keep the input's columns).
  std::vector<int64_t> plan_ids;
  // A join on a condition: its FROM item (the relation right above reads it directly) and the
  // qualifier of each plan id of its sides.
  std::string from_item;
  std::map<int64_t, std::string> qualifiers;
};

namespace {

bool IsPlainIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

// A Spark string literal: backslash and quote escaped (Spark's lexing).
std::string StringLiteral(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\\' || c == '\'') out.push_back('\\');
    out.push_back(c);
  }
  return out + "'";
}

// The oneof case's field name, for messages naming what is not supported.
std::string CaseName(const google::protobuf::Message& m, int number) {
  const google::protobuf::FieldDescriptor* f = m.GetDescriptor()->FindFieldByNumber(number);
  return f ? f->name() : "field " + std::to_string(number);
}

Status NotYet(const std::string& what) {
  return Status::NotSupported("Spark Connect: " + what + " is not supported by Sluice yet");
}

void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

std::string DateText(int64_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u", static_cast<long long>(y), m, d);
  return buf;
}

std::string TimestampText(int64_t micros) {
  int64_t days =
      micros >= 0 ? micros / 86400000000LL : -((-micros + 86399999999LL) / 86400000000LL);
  int64_t rest = micros - days * 86400000000LL;
  char buf[64];
  std::snprintf(
      buf, sizeof buf, "%s %02lld:%02lld:%02lld.%06lld", DateText(days).c_str(),
      static_cast<long long>(rest / 3600000000LL), static_cast<long long>(rest / 60000000LL % 60),
      static_cast<long long>(rest / 1000000LL % 60), static_cast<long long>(rest % 1000000LL));
  return buf;
}

std::string DoubleText(double v, const char* type) {
  if (std::isnan(v)) return std::string("CAST('NaN' AS ") + type + ")";
  if (std::isinf(v))
    return std::string("CAST('") + (v > 0 ? "Infinity" : "-Infinity") + "' AS " + type + ")";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return std::string("CAST('") + buf + "' AS " + type + ")";
}

// Column operators PySpark sends as unresolved functions: infix operators.
const std::map<std::string, std::string>& InfixOperators() {
  static const std::map<std::string, std::string> kOps = {
      {"==", "="},  {"!=", "<>"},   {"<", "<"},       {"<=", "<="},       {">", ">"},
      {">=", ">="}, {"<=>", "<=>"}, {"+", "+"},       {"-", "-"},         {"*", "*"},
      {"/", "/"},   {"%", "%"},     {"and", "AND"},   {"or", "OR"},       {"&", "&"},
      {"|", "|"},   {"^", "^"},     {"like", "LIKE"}, {"ilike", "ILIKE"}, {"rlike", "RLIKE"},
  };
  return kOps;
}

}  // namespace

std::string QuoteName(const std::string& name) {
  if (IsPlainIdentifier(name)) return name;
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out.push_back('`');
    out.push_back(c);
  }
  return out + "`";
}

std::string QuoteIdentifier(const std::string& unparsed) {
  // Split at dots outside backquotes; a backquoted part keeps its quotes.
  std::vector<std::string> parts;
  std::string part;
  bool quoted = false;
  bool any_quote = false;
  for (size_t i = 0; i < unparsed.size(); ++i) {
    char c = unparsed[i];
    if (c == '`') {
      any_quote = true;
      if (quoted && i + 1 < unparsed.size() && unparsed[i + 1] == '`') {
        part += "``";
        ++i;
        continue;
      }
      quoted = !quoted;
      part.push_back(c);
    } else if (c == '.' && !quoted) {
      parts.push_back(part);
      part.clear();
    } else {
      part.push_back(c);
    }
  }
  parts.push_back(part);
  if (quoted) return QuoteName(unparsed);  // an unbalanced quote: the whole text is one name
  std::vector<std::string> out;
  for (const std::string& p : parts) {
    if (!p.empty() && p.front() == '`' && p.back() == '`' && p.size() >= 2) {
      out.push_back(p);
    } else if (p.find('`') != std::string::npos || p.empty()) {
      return QuoteName(unparsed);
    } else {
      out.push_back(QuoteName(p));
    }
  }
  (void)any_quote;
  return Join(out, ".");
}

Result<std::string> LiteralToSql(const sc::Expression& e) {
  const sc::Expression::Literal& l = e.literal();
  using K = sc::Expression::Literal::LiteralTypeCase;
  switch (l.literal_type_case()) {
    case K::kNull: {
      if (l.null().kind_case() == sc::DataType::KIND_NOT_SET ||
          l.null().kind_case() == sc::DataType::kNull) {
        return std::string("NULL");
      }
      SLUICE_ASSIGN_OR_RETURN(std::string type, ProtoTypeToSql(l.null()));
      return "CAST(NULL AS " + type + ")";
    }
    case K::kBinary: {
      static const char* kHex = "0123456789ABCDEF";
      std::string out = "X'";
      for (unsigned char c : l.binary()) {
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
      }
      return out + "'";
    }
    case K::kBoolean:
      return std::string(l.boolean() ? "TRUE" : "FALSE");
    case K::kByte:
      return "CAST(" + std::to_string(l.byte()) + " AS TINYINT)";
    case K::kShort:
      return "CAST(" + std::to_string(l.short_()) + " AS SMALLINT)";
    case K::kInteger:
      return l.integer() < 0 ? "(" + std::to_string(l.integer()) + ")"
                             : std::to_string(l.integer());
    case K::kLong:
      return "CAST(" + std::to_string(l.long_()) + " AS BIGINT)";
    case K::kFloat:
      return DoubleText(l.float_(), "FLOAT");
    case K::kDouble:
      return DoubleText(l.double_(), "DOUBLE");
    case K::kDecimal: {
      const auto& d = l.decimal();
      if (d.has_precision() && d.has_scale()) {
        return "CAST(" + StringLiteral(d.value()) + " AS DECIMAL(" + std::to_string(d.precision()) +
               "," + std::to_string(d.scale()) + "))";
      }
      return d.value() + "BD";
    }
    case K::kString:
      return StringLiteral(l.string());
    case K::kDate:
      return "DATE '" + DateText(l.date()) + "'";
    case K::kTimestamp:
      return "TIMESTAMP '" + TimestampText(l.timestamp()) + "'";
    case K::kTimestampNtz:
      return "CAST('" + TimestampText(l.timestamp_ntz()) + "' AS TIMESTAMP_NTZ)";
    default:
      return NotYet("the literal of kind " + CaseName(l, l.literal_type_case()));
  }
}

Result<std::string> PlanTranslator::Function(const std::string& name,
                                             const std::string& args_joined,
                                             const std::vector<std::string>& args, bool distinct) {
  auto it = InfixOperators().find(name);
  if (it != InfixOperators().end()) {
    if (args.size() == 2) return "(" + args[0] + " " + it->second + " " + args[1] + ")";
    if (args.size() == 1 && name == "-") return "(- " + args[0] + ")";
    return Status::InvalidArgument("Spark Connect: the operator '" + name +
                                   "' takes 2 arguments, " + std::to_string(args.size()) +
                                   " given");
  }
  if (name == "not" && args.size() == 1) return "(NOT " + args[0] + ")";
  if (name == "negative" && args.size() == 1) return "(- " + args[0] + ")";
  if (name == "~" && args.size() == 1) return "(~ " + args[0] + ")";
  if (name == "isNull" && args.size() == 1) return "(" + args[0] + " IS NULL)";
  if (name == "isNotNull" && args.size() == 1) return "(" + args[0] + " IS NOT NULL)";
  if (name == "isNaN" && args.size() == 1) return "isnan(" + args[0] + ")";
  if (name == "in" && !args.empty()) {
    std::vector<std::string> rest(args.begin() + 1, args.end());
    return "(" + args[0] + " IN (" + Join(rest, ", ") + "))";
  }
  if (name == "when" && args.size() >= 2) {
    std::string out = "CASE";
    size_t i = 0;
    for (; i + 1 < args.size(); i += 2) out += " WHEN " + args[i] + " THEN " + args[i + 1];
    if (i < args.size()) out += " ELSE " + args[i];
    return out + " END";
  }
  if (name == "startswith" && args.size() == 2) return "startswith(" + args_joined + ")";
  if (name == "endswith" && args.size() == 2) return "endswith(" + args_joined + ")";
  if (name == "contains" && args.size() == 2) return "contains(" + args_joined + ")";
  if (!IsPlainIdentifier(name)) {
    return NotYet("the function '" + name + "'");
  }
  return name + "(" + (distinct ? "DISTINCT " : "") + args_joined + ")";
}

Result<std::string> PlanTranslator::Expr(const sc::Expression& e) {
  using K = sc::Expression::ExprTypeCase;
  switch (e.expr_type_case()) {
    case K::kLiteral:
      return LiteralToSql(e);
    case K::kUnresolvedAttribute: {
      if (e.unresolved_attribute().is_metadata_column()) {
        return NotYet("the metadata column '" + e.unresolved_attribute().unparsed_identifier() +
                      "'");
      }
      const auto& a = e.unresolved_attribute();
      std::string name = QuoteIdentifier(a.unparsed_identifier());
      if (a.has_plan_id() && qualifiers_ != nullptr) {
        auto q = qualifiers_->find(a.plan_id());
        if (q != qualifiers_->end()) return q->second + "." + name;
      }
      return name;
    }
    case K::kUnresolvedFunction: {
      const auto& f = e.unresolved_function();
      if (f.is_user_defined_function()) {
        return NotYet("the user-defined function '" + f.function_name() + "'");
      }
      std::vector<std::string> args;
      for (const sc::Expression& a : f.arguments()) {
        SLUICE_ASSIGN_OR_RETURN(std::string s, Expr(a));
        args.push_back(std::move(s));
      }
      return Function(f.function_name(), Join(args, ", "), args, f.is_distinct());
    }
    case K::kExpressionString:
      return "(" + e.expression_string().expression() + ")";
    case K::kUnresolvedStar: {
      const auto& s = e.unresolved_star();
      if (!s.has_unparsed_target()) return std::string("*");
      return s.unparsed_target();  // already "t.*" in Spark's syntax
    }
    case K::kAlias: {
      const auto& a = e.alias();
      if (a.name_size() != 1) return NotYet("an alias with several names (a multi-column alias)");
      SLUICE_ASSIGN_OR_RETURN(std::string inner, Expr(a.expr()));
      return inner + " AS " + QuoteName(a.name(0));
    }
    case K::kCast: {
      const auto& c = e.cast();
      SLUICE_ASSIGN_OR_RETURN(std::string inner, Expr(c.expr()));
      std::string type;
      if (c.has_type()) {
        SLUICE_ASSIGN_OR_RETURN(type, ProtoTypeToSql(c.type()));
      } else {
        type = c.type_str();
      }
      const char* fn = c.eval_mode() == sc::Expression::Cast::EVAL_MODE_TRY ? "TRY_CAST" : "CAST";
      return std::string(fn) + "(" + inner + " AS " + type + ")";
    }
    case K::kSortOrder: {
      const auto& s = e.sort_order();
      SLUICE_ASSIGN_OR_RETURN(std::string child, Expr(s.child()));
      bool desc = s.direction() == sc::Expression::SortOrder::SORT_DIRECTION_DESCENDING;
      std::string out = child + (desc ? " DESC" : " ASC");
      if (s.null_ordering() == sc::Expression::SortOrder::SORT_NULLS_FIRST) out += " NULLS FIRST";
      if (s.null_ordering() == sc::Expression::SortOrder::SORT_NULLS_LAST) out += " NULLS LAST";
      return out;
    }
    default:
      return NotYet("the expression " + CaseName(e, e.expr_type_case()));
  }
}

std::string PlanTranslator::From(const Sub& sub) {
  if (!sub.from_item.empty()) return sub.from_item;
  std::string name = sub.alias ? QuoteName(*sub.alias) : "_s" + std::to_string(next_alias_++);
  return "(" + sub.sql + ") AS " + name;
}

namespace {

// Sets the translator's qualifiers for the expressions of one relation over `in`.
class ScopedQualifiers {
 public:
  ScopedQualifiers(const std::map<int64_t, std::string>** slot,
                   const std::map<int64_t, std::string>& qualifiers)
      : slot_(slot), saved_(*slot) {
    *slot = qualifiers.empty() ? nullptr : &qualifiers;
  }
  ~ScopedQualifiers() { *slot_ = saved_; }
  ScopedQualifiers(const ScopedQualifiers&) = delete;
  ScopedQualifiers& operator=(const ScopedQualifiers&) = delete;

 private:
  const std::map<int64_t, std::string>** slot_;
  const std::map<int64_t, std::string>* saved_;
};

// The relations whose output keeps their input's columns (and so its plan ids).
bool KeepsInputColumns(sc::Relation::RelTypeCase k) {
  using K = sc::Relation::RelTypeCase;
  return k == K::kFilter || k == K::kSort || k == K::kLimit || k == K::kOffset ||
         k == K::kSubqueryAlias || k == K::kDeduplicate || k == K::kWithColumns ||
         k == K::kWithColumnsRenamed || k == K::kDrop || k == K::kProject;
}

const sc::Relation* SingleInput(const sc::Relation& rel) {
  using K = sc::Relation::RelTypeCase;
  switch (rel.rel_type_case()) {
    case K::kFilter:
      return &rel.filter().input();
    case K::kSort:
      return &rel.sort().input();
    case K::kLimit:
      return &rel.limit().input();
    case K::kOffset:
      return &rel.offset().input();
    case K::kSubqueryAlias:
      return &rel.subquery_alias().input();
    case K::kDeduplicate:
      return &rel.deduplicate().input();
    case K::kWithColumns:
      return &rel.with_columns().input();
    case K::kWithColumnsRenamed:
      return &rel.with_columns_renamed().input();
    case K::kDrop:
      return &rel.drop().input();
    case K::kProject:
      return rel.project().has_input() ? &rel.project().input() : nullptr;
    default:
      return nullptr;
  }
}

void CollectPlanIds(const sc::Relation& rel, std::vector<int64_t>* out) {
  if (rel.has_common() && rel.common().has_plan_id()) out->push_back(rel.common().plan_id());
  if (!KeepsInputColumns(rel.rel_type_case())) return;
  if (const sc::Relation* in = SingleInput(rel)) CollectPlanIds(*in, out);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The statement's first word, upper case, after blanks, comments and opening parentheses.
std::string FirstWord(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c)) || c == '(') {
      ++i;
    } else if (text.substr(i, 2) == "--") {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (text.substr(i, 2) == "/*") {
      size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 2;
    } else {
      break;
    }
  }
  std::string word;
  while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) {
    word.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(text[i++]))));
  }
  return word;
}

}  // namespace

bool IsQueryText(std::string_view text) {
  const std::string word = FirstWord(text);
  return word == "SELECT" || word == "WITH" || word == "VALUES" || word == "FROM" ||
         word == "TABLE";
}

bool IsDmlText(std::string_view text) {
  const std::string word = FirstWord(text);
  return word == "MERGE" || word == "UPDATE" || word == "DELETE" || word == "INSERT";
}

Result<std::string> PlanTranslator::ViewsInStatement(const std::string& text,
                                                     const std::vector<dialect::Token>& tokens) {
  // Words after which a table name is read (FROM t, JOIN t, MERGE ... USING t) or written.
  auto read_position = [](const dialect::Token& t) {
    return t.IsKeyword("from") || t.IsKeyword("join") || t.IsKeyword("using");
  };
  auto write_position = [](const dialect::Token& t) {
    return t.IsKeyword("into") || t.IsKeyword("update") || t.IsKeyword("table") ||
           t.IsKeyword("overwrite");
  };
  // Words that may follow a table reference and are not its alias.
  auto clause_word = [](const dialect::Token& t) {
    static const char* kWords[] = {
        "on",      "where",  "when",      "join",   "inner",   "left",        "right",
        "full",    "cross",  "natural",   "using",  "group",   "order",       "limit",
        "union",   "except", "intersect", "having", "window",  "lateral",     "anti",
        "semi",    "set",    "values",    "select", "qualify", "tablesample", "pivot",
        "unpivot", "with",   "partition", "by",     "cluster", "sort",        "distribute",
        "minus",   "offset", "timestamp", "version"};
    for (const char* w : kWords) {
      if (t.IsKeyword(w)) return true;
    }
    return false;
  };
  std::string out;
  size_t copied = 0;
  for (size_t i = 1; i < tokens.size(); ++i) {
    const dialect::Token& t = tokens[i];
    if (t.kind != dialect::TokenKind::kWord && t.kind != dialect::TokenKind::kBacktick) continue;
    if (tokens[i - 1].IsSymbol(".")) continue;
    if (i + 1 < tokens.size() && (tokens[i + 1].IsSymbol(".") || tokens[i + 1].IsSymbol("(")))
      continue;
    auto it = ctx_.temp_views->find(Lower(t.text));
    if (it == ctx_.temp_views->end()) continue;
    const dialect::Token& before = tokens[i - 1];
    if (write_position(before) ||
        (before.IsKeyword("from") && i >= 2 && tokens[i - 2].IsKeyword("delete"))) {
      return NotYet("a statement that writes the temporary view '" + it->second.name +
                    "' (a temporary view is read only)");
    }
    if (!read_position(before)) continue;  // not a table name here (a column, an alias, ...)
    // The user's alias, when one follows, names the derived table; else the view's name does.
    bool aliased = false;
    if (i + 1 < tokens.size()) {
      const dialect::Token& next = tokens[i + 1];
      aliased =
          next.IsKeyword("as") ||
          ((next.kind == dialect::TokenKind::kWord || next.kind == dialect::TokenKind::kBacktick) &&
           !clause_word(next));
    }
    out += text.substr(copied, t.begin - copied);
    out += "(" + it->second.sql + ")";
    if (!aliased) out += " AS " + QuoteName(it->second.name);
    copied = t.end;
  }
  out += text.substr(copied);
  return out;
}

Result<std::string> PlanTranslator::WithTempViews(const std::string& text) {
  if (ctx_.temp_views == nullptr || ctx_.temp_views->empty()) return text;
  SLUICE_ASSIGN_OR_RETURN(std::vector<dialect::Token> tokens,
                          dialect::Tokenize(text, dialect::Lexing::kSpark));
  std::vector<const TempView*> named;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    const dialect::Token& t = tokens[i];
    if (t.kind != dialect::TokenKind::kWord && t.kind != dialect::TokenKind::kBacktick) continue;
    if (i > 0 && tokens[i - 1].IsSymbol(".")) continue;  // a qualified name's second part
    if (tokens[i + 1].IsSymbol("(")) continue;           // a function call
    auto it = ctx_.temp_views->find(Lower(t.text));
    if (it == ctx_.temp_views->end()) continue;
    bool seen = false;
    for (const TempView* v : named) seen = seen || v == &it->second;
    if (!seen) named.push_back(&it->second);
  }
  if (named.empty()) return text;
  if (!IsQueryText(text)) return ViewsInStatement(text, tokens);
  std::string ctes;
  for (const TempView* v : named) {
    ctes += (ctes.empty() ? "" : ", ") + QuoteName(v->name) + " AS (" + v->sql + ")";
  }
  // A WITH of the text's own: the views come first in the same list.
  if (tokens[0].IsKeyword("with")) {
    size_t after = tokens[0].end;
    if (tokens[1].IsKeyword("recursive")) after = tokens[1].end;
    return text.substr(0, after) + " " + ctes + "," + text.substr(after);
  }
  return "WITH " + ctes + " " + text;
}

Result<engine::Schema> PlanTranslator::SchemaOf(const Sub& sub, const char* what) {
  if (!ctx_.schema_of) {
    return NotYet(std::string(what) + " without the input's schema");
  }
  return ctx_.schema_of(sub.from_item.empty() ? sub.sql : "SELECT * FROM " + sub.from_item);
}

Result<std::string> PlanTranslator::Query(const sc::Relation& relation) {
  SLUICE_ASSIGN_OR_RETURN(Sub sub, Translate(relation));
  return sub.sql;
}

Result<std::string> PlanTranslator::QualifiedExpr(
    const sc::Expression& expression, const std::map<int64_t, std::string>& qualifiers) {
  ScopedQualifiers scope(&qualifiers_, qualifiers);
  return Expr(expression);
}

std::vector<int64_t> PlanTranslator::PlanIds(const sc::Relation& relation) {
  std::vector<int64_t> out;
  CollectPlanIds(relation, &out);
  return out;
}

Result<PlanTranslator::Sub> PlanTranslator::Translate(const sc::Relation& rel) {
  SLUICE_ASSIGN_OR_RETURN(Sub out, TranslateRelation(rel));
  if (out.plan_ids.empty()) CollectPlanIds(rel, &out.plan_ids);
  return out;
}

Result<PlanTranslator::Sub> PlanTranslator::TranslateRelation(const sc::Relation& rel) {
  using K = sc::Relation::RelTypeCase;
  Sub out;
  switch (rel.rel_type_case()) {
    case K::kSql: {
      const auto& q = rel.sql();
      // args and pos_args are the deprecated spellings of the parameters: read by reflection.
      const auto* d = q.GetDescriptor();
      const auto* r = q.GetReflection();
      bool old_args = r->FieldSize(q, d->FindFieldByName("args")) > 0 ||
                      r->FieldSize(q, d->FindFieldByName("pos_args")) > 0;
      if (old_args || q.named_arguments_size() || q.pos_arguments_size()) {
        return NotYet("spark.sql() with query parameters (args)");
      }
      std::string text = q.query();
      while (!text.empty() &&
             (std::isspace(static_cast<unsigned char>(text.back())) || text.back() == ';')) {
        text.pop_back();
      }
      SLUICE_ASSIGN_OR_RETURN(out.sql, WithTempViews(text));
      return out;
    }
    case K::kCachedRemoteRelation: {
      const std::string& id = rel.cached_remote_relation().relation_id();
      if (!ctx_.cached_relation) return NotYet("a cached remote relation here");
      std::optional<std::string> sql = ctx_.cached_relation(id);
      if (!sql) {
        return Status::NotFound("Spark Connect: no cached DataFrame with id " + id +
                                " (a foreachBatch DataFrame is readable during its call only)");
      }
      out.sql = *sql;
      return out;
    }
    case K::kRange: {
      const auto& r = rel.range();
      if (r.step() == 0) {
        return Status::InvalidArgument("Spark Connect: range() with step 0");
      }
      int64_t start = r.has_start() ? r.start() : 0;
      // The column alias names range()'s one column `id`, as Spark's range has it, whatever
      // the engine calls it.
      out.sql = "SELECT * FROM range(" + std::to_string(start) + ", " + std::to_string(r.end()) +
                ", " + std::to_string(r.step()) + ") AS _range(id)";
      return out;
    }
    case K::kRead: {
      const auto& read = rel.read();
      if (read.is_streaming()) return NotYet("readStream");
      if (read.has_named_table()) {
        if (read.named_table().options_size()) return NotYet("spark.read.table() with options");
        if (ctx_.temp_views != nullptr) {
          auto v = ctx_.temp_views->find(Lower(read.named_table().unparsed_identifier()));
          if (v != ctx_.temp_views->end()) {
            out.sql = "SELECT * FROM (" + v->second.sql + ") AS " + QuoteName(v->second.name);
            return out;
          }
        }
        out.sql = "SELECT * FROM " + QuoteIdentifier(read.named_table().unparsed_identifier());
        return out;
      }
      const auto& ds = read.data_source();
      std::string format = ds.has_format() ? ds.format() : "";
      // PySpark sends an empty schema when none is given.
      if (format == "delta" && ds.paths_size() == 1 && ds.options_size() == 0 &&
          ds.predicates_size() == 0 && (!ds.has_schema() || ds.schema().empty())) {
        out.sql = "SELECT * FROM delta.`" + ds.paths(0) + "`";
        return out;
      }
      return NotYet("spark.read with format '" + format + "' (only format('delta').load(path) " +
                    "without options is)");
    }
    case K::kProject: {
      const auto& p = rel.project();
      Sub in;
      if (p.has_input()) {
        SLUICE_ASSIGN_OR_RETURN(in, Translate(p.input()));
      }
      ScopedQualifiers scope(&qualifiers_, in.qualifiers);
      std::vector<std::string> exprs;
      for (const sc::Expression& e : p.expressions()) {
        // selectExpr's text may carry its own alias ("a + 1 AS b"): a SELECT item as written.
        if (e.has_expression_string()) {
          exprs.push_back(e.expression_string().expression());
          continue;
        }
        SLUICE_ASSIGN_OR_RETURN(std::string s, Expr(e));
        exprs.push_back(std::move(s));
      }
      if (!p.has_input()) {
        out.sql = "SELECT " + Join(exprs, ", ");
        return out;
      }
      out.sql = "SELECT " + Join(exprs, ", ") + " FROM " + From(in);
      return out;
    }
    case K::kFilter: {
      SLUICE_ASSIGN_OR_RETURN(Sub in, Translate(rel.filter().input()));
      ScopedQualifiers scope(&qualifiers_, in.qualifiers);
      SLUICE_ASSIGN_OR_RETURN(std::string cond, Expr(rel.filter().condition()));
      out.sql = "SELECT * FROM " + From(in) + " WHERE " + cond;
      out.alias = in.alias;  // a filter keeps its input's qualifier: t.id still names the column
      return out;
    }
    case K::kLimit:
    case K::kOffset: {
      bool limit = rel.rel_type_case() == K::kLimit;
      const sc::Relation& input = limit ? rel.limit().input() : rel.offset().input();
      SLUICE_ASSIGN_OR_RETURN(Sub in, Translate(input));
      std::string clause = limit ? " LIMIT " + std::to_string(rel.limit().limit())
                                 : " OFFSET " + std::to_string(rel.offset().offset());
      if (!in.order_by.empty()) {
        // A Limit right above a Sort keeps the order: one query with both clauses.
        out.sql = "SELECT * FROM " + From(*in.sort_input) + " ORDER BY " + in.order_by + clause;
      } else {
        out.sql = "SELECT * FROM " + From(in) + clause;
      }
      out.alias = in.sort_input ? in.sort_input->alias : in.alias;  // kept, as by Filter
      return out;
    }
    case K::kSort: {
      SLUICE_ASSIGN_OR_RETURN(Sub in, Translate(rel.sort().input()));
      ScopedQualifiers scope(&qualifiers_, in.qualifiers);
      std::vector<std::string> keys;
      for (const auto& o : rel.sort().order()) {
        sc::Expression e;
        *e.mutable_sort_order() = o;
        SLUICE_ASSIGN_OR_RETURN(std::string s, Expr(e));
        keys.push_back(std::move(s));
      }
      out.order_by = Join(keys, ", ");
      out.alias = in.alias;  // kept, as by Filter
      out.sql = "SELECT * FROM " + From(in) + " ORDER BY " + out.order_by;
      out.sort_input = std::make_shared<Sub>(std::move(in));
      return out;
    }
    case K::kSubqueryAlias: {
      const auto& a = rel.subquery_alias();
      if (a.qualifier_size()) return NotYet("an alias with a qualifier");
      SLUICE_ASSIGN_OR_RETURN(Sub in, Translate(a.input()));
      out.sql = "SELECT * FROM " + From(in);
      out.alias = a.alias();
      return out;
    }
    case K::kToDf: {
      SLUICE_ASSIGN_OR_RETURN(Sub in, Translate(rel.to_df().input()));
      std::vector<std::string> names;
      for (const std::string& n : rel.to_df().column_names()) names.push_back(QuoteName(n));
      std::string name = "_s" + std::to_string(next_alias_++);
      out.sql = "SELECT * FROM (" + in.sql + ") AS " + name + "(" + Join(names, ", ") + ")";
      return out;
    }
    case K::kDrop: {
      const auto& d = rel.drop();
      std::vector<std::string> names;
      for (const sc::Expression& e : d.columns()) {
        SLUICE_ASSIGN_OR_RETURN(std::string s, Expr(e));
        names.push_back(std::move(s));
      }
      for (const std::string& n : d.column_names()) names.push_back(QuoteName(n));
      SLUICE_ASSIGN_OR_RETURN(Sub in, Translate(d.input()));
      out.sql = "SELECT * EXCEPT (" + Join(names, ", ") + ") FROM " + From(in);
      return out;
    }
    case K::kSetOp: {
      const auto& s = rel.set_op();
      SLUICE_ASSIGN_OR_RETURN(Sub l, Translate(s.left_input()));
      SLUICE_ASSIGN_OR_RETURN(Sub r, Translate(s.right_input()));
      std::string op;
      switch (s.set_op_type()) {
        case sc::SetOperation::SET_OP_TYPE_UNION:
          op = "UNION";
          break;
        case sc::SetOperation::SET_OP_TYPE_INTERSECT:
          op = "INTERSECT";
          break;
        case sc::SetOperation::SET_OP_TYPE_EXCEPT:
          op = "EXCEPT";
          break;
        default:
          return NotYet("a set operation of an unknown type");
      }
      if (s.by_name()) {
        if (op != "UNION") return NotYet(op + " by name");
        if (s.allow_missing_columns()) return NotYet("unionByName(allowMissingColumns=True)");
        op += " ALL BY NAME";
      } else if (s.is_all()) {
        op += " ALL";
      } else if (s.set_op_type() == sc::SetOperation::SET_OP_TYPE_UNION) {
        op += " DISTINCT";
      }
      out.sql = "SELECT * FROM " + From(l) + " " + op + " SELECT * FROM " + From(r);
      return out;
    }
    case K::kAggregate: {
      const auto& a = rel.aggregate();
      if (a.group_type() != sc::Aggregate::GROUP_TYPE_GROUPBY) {
        return NotYet("groupBy of type " + sc::Aggregate::GroupType_Name(a.group_type()) +
                      " (rollup, cube, pivot, grouping sets)");
      }
      SLUICE_ASSIGN_OR_RETURN(Sub in, Translate(a.input()));
      ScopedQualifiers scope(&qualifiers_, in.qualifiers);
      std::vector<std::string> keys, select;
      for (const sc::Expression& e : a.grouping_expressions()) {
        // groupBy(expr.alias("k")): the SELECT list names the key, GROUP BY groups by its
        // expression.
        SLUICE_ASSIGN_OR_RETURN(std::string s, Expr(e));
        select.push_back(s);
        if (e.has_alias()) {
          SLUICE_ASSIGN_OR_RETURN(s, Expr(e.alias().expr()));
        }
        keys.push_back(s);
      }
      for (const sc::Expression& e : a.aggregate_expressions()) {
        SLUICE_ASSIGN_OR_RETURN(std::string s, Expr(e));
        select.push_back(std::move(s));
      }
      out.sql = "SELECT " + Join(select, ", ") + " FROM " + From(in);
      if (!keys.empty()) out.sql += " GROUP BY " + Join(keys, ", ");
      return out;
    }
    case K::kDeduplicate: {
      const auto& d = rel.deduplicate();
      if (d.within_watermark()) return NotYet("dropDuplicatesWithinWatermark");
      if (d.column_names_size() && !d.all_columns_as_keys()) {
        return NotYet("dropDuplicates(subset) on a batch DataFrame");
      }
      SLUICE_ASSIGN_OR_RETURN(Sub in, Translate(d.input()));
      out.sql = "SELECT DISTINCT * FROM " + From(in);
      return out;
    }
    case K::kLocalRelation: {
      SLUICE_ASSIGN_OR_RETURN(out.sql, LocalRelationSql(rel.local_relation()));
      return out;
    }
    case K::kJoin:
      return TranslateJoin(rel);
    case K::kWithColumns: {
      const auto& w = rel.with_columns();
      SLUICE_ASSIGN_OR_RETURN(Sub in, Translate(w.input()));
      SLUICE_ASSIGN_OR_RETURN(engine::Schema schema, SchemaOf(in, "withColumn(s)"));
      ScopedQualifiers scope(&qualifiers_, in.qualifiers);
      // Each new column by name (lower case): its expression; a name of the input replaces that
      // column where it is, the others come after the input's columns, in order.
      std::vector<std::pair<std::string, std::string>> added;  // (name, "expr AS name")
      std::map<std::string, size_t> by_name;
      for (const sc::Expression::Alias& a : w.aliases()) {
        if (a.name_size() != 1) return NotYet("withColumns with a multi-column alias");
        SLUICE_ASSIGN_OR_RETURN(std::string e, Expr(a.expr()));
        std::string key = Lower(a.name(0));
        if (by_name.count(key)) {
          return Status::InvalidArgument("Spark Connect: withColumns names the column '" +
                                         a.name(0) + "' twice");
        }
        by_name[key] = added.size();
        added.emplace_back(key, e + " AS " + QuoteName(a.name(0)));
      }
      std::vector<std::string> list;
      std::vector<bool> used(added.size(), false);
      for (const engine::Field& f : schema) {
        auto it = by_name.find(Lower(f.name));
        if (it != by_name.end() && !used[it->second]) {
          list.push_back(added[it->second].second);
          used[it->second] = true;
        } else {
          list.push_back(QuoteName(f.name));
        }
      }
      for (size_t i = 0; i < added.size(); ++i) {
        if (!used[i]) list.push_back(added[i].second);
      }
      out.sql = "SELECT " + Join(list, ", ") + " FROM " + From(in);
      return out;
    }
    case K::kWithColumnsRenamed: {
      const auto& w = rel.with_columns_renamed();
      SLUICE_ASSIGN_OR_RETURN(Sub in, Translate(w.input()));
      SLUICE_ASSIGN_OR_RETURN(engine::Schema schema, SchemaOf(in, "withColumnRenamed"));
      std::vector<std::string> names;
      for (const engine::Field& f : schema) names.push_back(f.name);
      std::vector<std::pair<std::string, std::string>> renames;
      for (const auto& r : w.renames()) renames.emplace_back(r.col_name(), r.new_col_name());
      {
        // rename_columns_map is the deprecated spelling (older clients): read by reflection.
        const auto* field = w.GetDescriptor()->FindFieldByName("rename_columns_map");
        const auto* r = w.GetReflection();
        for (int i = 0; field && i < r->FieldSize(w, field); ++i) {
          const google::protobuf::Message& entry = r->GetRepeatedMessage(w, field, i);
          const auto* ed = entry.GetDescriptor();
          renames.emplace_back(
              entry.GetReflection()->GetString(entry, ed->FindFieldByName("key")),
              entry.GetReflection()->GetString(entry, ed->FindFieldByName("value")));
        }
      }
      // Applied in order, as Spark does; a name that is not a column is no change.
      std::vector<std::string> current = names;
      for (const auto& [from, to] : renames) {
        for (std::string& n : current) {
          if (AsciiEqualsIgnoreCase(n, from)) n = to;
        }
      }
      std::vector<std::string> list;
      for (size_t i = 0; i < names.size(); ++i) {
        list.push_back(names[i] == current[i]
                           ? QuoteName(names[i])
                           : QuoteName(names[i]) + " AS " + QuoteName(current[i]));
      }
      out.sql = "SELECT " + Join(list, ", ") + " FROM " + From(in);
      return out;
    }
    case K::REL_TYPE_NOT_SET:
      return Status::InvalidArgument("Spark Connect: a relation without a type");
    default:
      return NotYet("the relation " + RelationWithApi(CaseName(rel, rel.rel_type_case())));
  }
}

Result<PlanTranslator::Sub> PlanTranslator::TranslateJoin(const sc::Relation& rel) {
  const sc::Join& j = rel.join();
  if (j.has_join_data_type()) return NotYet("joinWith (a join of typed rows)");
  SLUICE_ASSIGN_OR_RETURN(Sub left, Translate(j.left()));
  SLUICE_ASSIGN_OR_RETURN(Sub right, Translate(j.right()));
  const int n = next_alias_++;
  Sub out;
  // The sides' FROM items and the qualifier of each side's plan ids.
  std::string left_name = left.alias ? QuoteName(*left.alias) : "_jl" + std::to_string(n);
  std::string right_name = right.alias ? QuoteName(*right.alias) : "_jr" + std::to_string(n);
  std::string left_from;
  if (!left.from_item.empty()) {
    left_from = left.from_item;  // a chain of joins: a b c, each side keeps its name
    out.qualifiers = left.qualifiers;
  } else {
    left_from = "(" + left.sql + ") AS " + left_name;
    for (int64_t id : left.plan_ids) out.qualifiers[id] = left_name;
  }
  std::string right_from = "(" + right.sql + ") AS " + right_name;
  bool semi_or_anti = false;
  std::string keyword;
  switch (j.join_type()) {
    case sc::Join::JOIN_TYPE_UNSPECIFIED:
    case sc::Join::JOIN_TYPE_INNER:
      keyword = "JOIN";
      break;
    case sc::Join::JOIN_TYPE_FULL_OUTER:
      keyword = "FULL OUTER JOIN";
      break;
    case sc::Join::JOIN_TYPE_LEFT_OUTER:
      keyword = "LEFT OUTER JOIN";
      break;
    case sc::Join::JOIN_TYPE_RIGHT_OUTER:
      keyword = "RIGHT OUTER JOIN";
      break;
    case sc::Join::JOIN_TYPE_LEFT_ANTI:
      keyword = "LEFT ANTI JOIN";
      semi_or_anti = true;
      break;
    case sc::Join::JOIN_TYPE_LEFT_SEMI:
      keyword = "LEFT SEMI JOIN";
      semi_or_anti = true;
      break;
    case sc::Join::JOIN_TYPE_CROSS:
      keyword = "CROSS JOIN";
      break;
    default:
      return NotYet("a join of type " + std::to_string(static_cast<int>(j.join_type())));
  }
  if (j.using_columns_size() > 0) {
    if (j.has_join_condition()) {
      return Status::InvalidArgument("Spark Connect: a join with both a condition and columns");
    }
    if (keyword == "CROSS JOIN") keyword = "JOIN";
    SLUICE_ASSIGN_OR_RETURN(engine::Schema ls, SchemaOf(left, "a join on column names"));
    SLUICE_ASSIGN_OR_RETURN(engine::Schema rs, SchemaOf(right, "a join on column names"));
    auto find = [](const engine::Schema& s, const std::string& name) -> std::optional<size_t> {
      for (size_t i = 0; i < s.size(); ++i) {
        if (AsciiEqualsIgnoreCase(s[i].name, name)) return i;
      }
      return std::nullopt;
    };
    std::vector<bool> left_key(ls.size(), false), right_key(rs.size(), false);
    std::vector<std::string> on, list;
    for (const std::string& k : j.using_columns()) {
      std::optional<size_t> li = find(ls, k), ri = find(rs, k);
      if (!li || !ri) {
        return Status::InvalidArgument("[UNRESOLVED_USING_COLUMN_FOR_JOIN] USING column `" + k +
                                       "` cannot be resolved on the " + (li ? "right" : "left") +
                                       " side of the join");
      }
      left_key[*li] = right_key[*ri] = true;
      std::string l = left_name + "." + QuoteName(ls[*li].name);
      std::string r = right_name + "." + QuoteName(rs[*ri].name);
      on.push_back(l + " = " + r);
      if (j.join_type() == sc::Join::JOIN_TYPE_RIGHT_OUTER) {
        list.push_back(r + " AS " + QuoteName(rs[*ri].name));
      } else if (j.join_type() == sc::Join::JOIN_TYPE_FULL_OUTER) {
        list.push_back("COALESCE(" + l + ", " + r + ") AS " + QuoteName(ls[*li].name));
      } else {
        list.push_back(l + " AS " + QuoteName(ls[*li].name));
      }
    }
    if (!left.from_item.empty()) {
      return NotYet("a join on column names whose left side is a join on a condition");
    }
    for (size_t i = 0; i < ls.size(); ++i) {
      if (!left_key[i]) list.push_back(left_name + "." + QuoteName(ls[i].name));
    }
    if (!semi_or_anti) {
      for (size_t i = 0; i < rs.size(); ++i) {
        if (!right_key[i]) list.push_back(right_name + "." + QuoteName(rs[i].name));
      }
    }
    out.sql = "SELECT " + Join(list, ", ") + " FROM " + left_from + " " + keyword + " " +
              right_from + " ON " + Join(on, " AND ");
    out.qualifiers.clear();
    return out;
  }
  for (int64_t id : right.plan_ids) out.qualifiers[id] = right_name;
  std::string on;
  if (j.has_join_condition()) {
    ScopedQualifiers scope(&qualifiers_, out.qualifiers);
    SLUICE_ASSIGN_OR_RETURN(std::string cond, Expr(j.join_condition()));
    if (keyword == "CROSS JOIN") keyword = "JOIN";
    on = " ON " + cond;
  } else if (keyword == "JOIN") {
    keyword = "CROSS JOIN";  // an inner join without a condition: every pair, as Spark
  } else if (keyword != "CROSS JOIN") {
    on = " ON TRUE";
  }
  out.from_item = left_from + " " + keyword + " " + right_from + on;
  out.sql = "SELECT * FROM " + out.from_item;
  if (semi_or_anti) {
    // Only the left side's columns: the relation above reads it as a derived table.
    out.from_item.clear();
    out.qualifiers.clear();
    out.plan_ids = left.plan_ids;
  } else {
    out.plan_ids = left.plan_ids;
    out.plan_ids.insert(out.plan_ids.end(), right.plan_ids.begin(), right.plan_ids.end());
  }
  return out;
}

}  // namespace sluice::connect
