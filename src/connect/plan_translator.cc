#include "connect/plan_translator.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>

#include "connect/spark_types.h"
#include "spark/connect/relations.pb.h"

namespace sluice::connect {

namespace sc = spark::connect;

struct PlanTranslator::Sub {
  std::string sql;                   // a query
  std::optional<std::string> alias;  // from SubqueryAlias: the name it is read by
  std::string order_by;              // from Sort: its ORDER BY, for a Limit right above it
  std::shared_ptr<Sub> sort_input;   // from Sort: its input, for a Limit right above it
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
      return QuoteIdentifier(e.unresolved_attribute().unparsed_identifier());
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
  std::string name = sub.alias ? QuoteName(*sub.alias) : "_s" + std::to_string(next_alias_++);
  return "(" + sub.sql + ") AS " + name;
}

Result<std::string> PlanTranslator::Query(const sc::Relation& relation) {
  SLUICE_ASSIGN_OR_RETURN(Sub sub, Translate(relation));
  return sub.sql;
}

Result<PlanTranslator::Sub> PlanTranslator::Translate(const sc::Relation& rel) {
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
      out.sql = text;
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
        out.sql = "SELECT * FROM " + QuoteIdentifier(read.named_table().unparsed_identifier());
        return out;
      }
      const auto& ds = read.data_source();
      std::string format = ds.has_format() ? ds.format() : "";
      if (format == "delta" && ds.paths_size() == 1 && ds.options_size() == 0 &&
          ds.predicates_size() == 0 && !ds.has_schema()) {
        out.sql = "SELECT * FROM delta.`" + ds.paths(0) + "`";
        return out;
      }
      return NotYet("spark.read with format '" + format + "' (only format('delta').load(path) " +
                    "without options is)");
    }
    case K::kProject: {
      const auto& p = rel.project();
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
      SLUICE_ASSIGN_OR_RETURN(Sub in, Translate(p.input()));
      out.sql = "SELECT " + Join(exprs, ", ") + " FROM " + From(in);
      return out;
    }
    case K::kFilter: {
      SLUICE_ASSIGN_OR_RETURN(Sub in, Translate(rel.filter().input()));
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
      SLUICE_ASSIGN_OR_RETURN(Sub in, Translate(a.input()));
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
    case K::REL_TYPE_NOT_SET:
      return Status::InvalidArgument("Spark Connect: a relation without a type");
    default:
      return NotYet("the relation " + CaseName(rel, rel.rel_type_case()));
  }
}

}  // namespace sluice::connect
