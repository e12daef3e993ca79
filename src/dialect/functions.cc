// Spark's function spellings whose names or argument shapes the engine reads otherwise (rules.h).
//
// Shapes:
//   Spark                            rewritten to                        why
//   array(1, 2, 3), array()          list_value(1, 2, 3), list_value()   DuckDB's parser refuses
//                                                                        array(
//   map(k1, v1, k2, v2)              MAP {k1: v1, k2: v2}                DuckDB's map() takes
//                                                                        lists
//   struct(a, t.b, 1 AS x, 2)        struct_pack(a := a, b := t.b,       fields named as Spark
//                                      x := 1, col4 := 2)                names them (col<n>)
//   named_struct('a', 1, 'b', x)     struct_pack("a" := 1, "b" := x)     names are literals in
//                                                                        Spark
//   concat(a, b, c)                  ((a) || (b) || (c))                 NULL when one is NULL
//                                                                        (DuckDB's concat skips
//                                                                        NULLs); strings, arrays
//   listagg(x, s) WITHIN GROUP       string_agg(x, s ORDER BY y)         DuckDB's parser refuses
//     (ORDER BY y)                                                       DISTINCT with WITHIN GROUP
//   SELECT json_tuple(j, 'a', 'b')   SELECT get_json_object(j, '$.' || 'a') AS c0, ... AS c1
//                                                                        a generator in Spark
//   xs[i], m[k] (i, k not a string   spark_element(xs, i)                0-based in Spark, 1-based
//   literal)                                                             in DuckDB; a map's key
//
// Higher-order functions (Spark's lambdas, with the engine's list functions; `e` is a name made
// for the rewrite, the lambda's parameters are replaced in its body):
//   transform(xs, x -> f)            list_transform(xs, x -> f)          FILTER is a clause in
//   filter(xs, x -> p)               list_filter(xs, x -> p)             DuckDB
//   transform / filter (x, i) -> f   ... (x, i) -> f[i := (i - 1)]       Spark's index counts
//                                                                        from 0
//   aggregate / reduce(xs, z,        list_reduce(xs, (acc, x) -> m, z)   argument order
//     (acc, x) -> m [, a -> f])        [list_transform([..], a -> f)[1]]
//   exists(xs, x -> p)               spark_exists(list_transform(..))    three-valued (NULL when
//   forall(xs, x -> p)               spark_forall(list_transform(..))    no true but a NULL)
//   zip_with(a, b, (x, y) -> f)      list_transform(list_zip(a, b),      the shorter padded with
//                                      e -> f[x := e[1], y := e[2]])     NULLs
//   arrays_zip(a, b)                 list_transform(list_zip(a, b), e -> struct_pack(...))
//                                    fields named as Spark (the column's name, else 0, 1, ...)
//   map_filter(m, (k, v) -> p)       map_from_entries(list_filter(map_entries(m), e -> p))
//   transform_values(m, (k, v) -> f) map_from_entries(list_transform(map_entries(m), ...))
//   transform_keys(m, (k, v) -> f)   likewise, the key replaced
//   map_zip_with(m1, m2, (k, a, b)   map_from_entries(list_transform(spark_map_zip(m1, m2), ...))
//     -> f)
//   array_sort(xs, (l, r) -> c)      spark_sort_by_comparison(xs, the comparator over every pair
//                                    of elements): a stable sort (engine/spark_collections.h)
//
// Renames (kRenames): Spark's name -> the engine's function; `args` is the only argument count
// renamed (kAny: any). A call with a lambda keeps its name. Reserved words of DuckDB's parser
// (SOME / ANY (subquery), CHAR the type) are renamed only where they are no quantified
// comparison. The spark_<name> functions are in src/engine/spark_*.cc.
#include <optional>
#include <string>

#include "common/strings.h"
#include "dialect/rules.h"
#include "dialect/types.h"

namespace sluice::dialect {
namespace {

constexpr size_t kAny = 0;

struct Rename {
  const char* spark;
  const char* engine;
  size_t args;
  const char* why;
};
constexpr Rename kRenames[] = {
    {"some", "bool_or", kAny, "reserved word in DuckDB"},
    {"any", "bool_or", kAny, "reserved word in DuckDB"},
    {"char", "chr", kAny, "reserved word in DuckDB"},
    {"concat_ws", "spark_concat_ws", kAny, "DuckDB prints an array as '[a, b]'"},
    {"regexp_replace", "spark_regexp_replace", kAny, "DuckDB replaces the first match only"},
    {"length", "spark_length", 1, "characters of a STRING, bytes of a BINARY"},
    {"json_array_length", "spark_json_array_length", 1, "NULL for text that is not JSON"},
    {"date_trunc", "spark_date_trunc", 2, "Spark's units and result type"},
    {"trunc", "spark_trunc", 2, "Spark's units"},
    {"date_sub", "spark_date_sub", 2, "days, not an interval"},
    {"dayofweek", "spark_dayofweek", 1, "1 = Sunday"},
    {"weekday", "spark_weekday", 1, "0 = Monday"},
    {"split", "spark_split", 2, "a Java regex"},
    {"split", "spark_split_limit", 3, "a Java regex, at most `limit` parts"},
    {"datediff", "spark_datediff", 2, "end minus start in days"},
    {"array_sort", "spark_array_sort", 1, "NULLs last"},
    {"cardinality", "size", 1, "DuckDB's cardinality takes maps only"},
    {"element_at", "spark_element_at", 2, "1-based, negative from the end; DuckDB's: maps only"},
    {"try_element_at", "spark_try_element_at", 2, "as element_at, NULL out of bounds"},
    {"reverse", "spark_reverse", 1, "a string or an array"},
    {"array_contains", "spark_array_contains", 2, "NULL when not found and a NULL element"},
    {"array_distinct", "spark_array_distinct", 1, "first occurrences in order, one NULL kept"},
    {"array_intersect", "spark_array_intersect", 2, "in the first array's order"},
    {"array_prepend", "spark_array_prepend", 2, "DuckDB's takes (element, array)"},
    {"decode", "spark_decode", 2, "a charset"},
    {"encode", "spark_encode", 2, "a charset"},
    {"hash", "spark_hash", kAny, "Spark's Murmur3 (seed 42)"},
    {"octet_length", "spark_octet_length", 1, "the UTF-8 bytes of a STRING"},
    {"replace", "spark_replace", 2, "the search string removed"},
    {"substring", "spark_substring", 2, "position 0 counts as 1"},
    {"substring", "spark_substring", 3, "position 0 counts as 1"},
    {"substr", "spark_substring", 2, "position 0 counts as 1"},
    {"substr", "spark_substring", 3, "position 0 counts as 1"},
    {"regexp_extract", "spark_regexp_extract", kAny, "a Java regex; group 1 by default"},
    {"regexp_extract_all", "spark_regexp_extract_all", kAny, "a Java regex; group 1 by default"},
    {"to_json", "spark_to_json", 1, "NULL fields left out; Spark's formats of values"},
    // Types and numbers (engine/spark_casts.h, spark_scalars.cc), first/last's ignoreNulls,
    // to_timestamp's Spark text (engine/spark_collections.cc, spark_datetime.cc).
    {"typeof", "spark_typeof", 1, "Spark's type names (int, string, array<int>)"},
    {"ceil", "spark_ceil", 1, "a BIGINT for a DOUBLE"},
    {"ceiling", "spark_ceil", 1, "a BIGINT for a DOUBLE"},
    {"floor", "spark_floor", 1, "a BIGINT for a DOUBLE"},
    {"sign", "signum", 1, "a DOUBLE"},
    {"sqrt", "spark_sqrt", 1, "NaN for a negative number"},
    {"conv", "spark_conv", 3, "DuckDB has none"},
    {"to_timestamp", "spark_to_timestamp", kAny, "Spark's text forms and patterns"},
    {"first", "spark_first", 2, "first(x, ignoreNulls)"},
    {"last", "spark_last", 2, "last(x, ignoreNulls)"},
};

struct Lambda {
  std::vector<std::string> params;
  size_t body_begin = 0;  // token indexes of the body, [body_begin, body_end)
  size_t body_end = 0;
};

// The lambda `x -> body` or `(x, y) -> body` spanning tokens [from, to), if it is one.
std::optional<Lambda> ParseLambda(const std::vector<Token>& tokens, size_t from, size_t to) {
  Lambda l;
  size_t k = from;
  if (k < to && IsName(tokens[k]) && tokens[k + 1].IsSymbol("->")) {
    l.params.push_back(tokens[k].text);
    k += 2;
  } else if (k < to && tokens[k].IsSymbol("(")) {
    ++k;
    while (k < to && IsName(tokens[k])) {
      l.params.push_back(tokens[k].text);
      ++k;
      if (tokens[k].IsSymbol(",")) ++k;
    }
    if (l.params.empty() || !tokens[k].IsSymbol(")") || !tokens[k + 1].IsSymbol("->")) {
      return std::nullopt;
    }
    k += 2;
  } else {
    return std::nullopt;
  }
  if (k >= to) return std::nullopt;
  l.body_begin = k;
  l.body_end = to;
  return l;
}

// True when the call at [open, close] has a lambda (->) among its arguments.
bool HasLambda(const std::vector<Token>& tokens, size_t open, size_t close) {
  for (size_t k = open + 1; k < close; ++k) {
    if (tokens[k].IsSymbol("->")) return true;
  }
  return false;
}

// The field name Spark gives struct()'s argument tokens[from, to): the alias of `expr AS name`
// (then *alias_at is the AS), a column's name (a, t.a), or col<n>.
std::string StructFieldName(const std::vector<Token>& tokens, size_t from, size_t to, size_t n,
                            size_t* alias_at, const std::string& prefix = "col") {
  *alias_at = kNoToken;
  if (to - from >= 3 && tokens[to - 2].IsKeyword("as") && IsName(tokens[to - 1])) {
    *alias_at = to - 2;
    return tokens[to - 1].text;
  }
  bool chain = IsName(tokens[from]);
  for (size_t k = from + 1; k < to && chain; k += 2) {
    chain = tokens[k].IsSymbol(".") && k + 1 < to && IsName(tokens[k + 1]);
  }
  if (chain && (to - from) % 2 == 1) return tokens[to - 1].text;
  return prefix + std::to_string(n);
}

// True when an expression (a call), not a type or a qualified name, may start after `prev`:
// after a symbol other than '.' and '::', or a clause word other than AS (CAST(x AS MAP(...)),
// a column's type in CREATE TABLE t (m MAP(...)) stay types).
bool ExpressionFollows(const Token& prev) {
  if (prev.kind == TokenKind::kSymbol) return !prev.IsSymbol(".") && !prev.IsSymbol("::");
  return IsClauseWord(prev) && !prev.IsKeyword("as");
}

// STRUCT(c INT, d STRUCT(e VARCHAR)) is the engine's spelling of a struct type (a column's type
// in CREATE TABLE, a CAST target), not Spark's struct() value: every argument is a field name
// followed by a type that runs to the argument's end (struct(a AS x), struct(NOT b),
// struct(x IS NULL) are values).
bool IsStructTypeDeclaration(const std::vector<Token>& tokens,
                             const std::vector<std::pair<size_t, size_t>>& args) {
  static const char* const kValueWords[] = {"not", "case", "exists", "interval", "distinct", "all"};
  for (const auto& [begin, end] : args) {
    if (end < begin + 2) return false;
    const Token& name = tokens[begin];
    const Token& type = tokens[begin + 1];
    if (name.kind != TokenKind::kWord && name.kind != TokenKind::kQuotedIdent) return false;
    for (const char* w : kValueWords) {
      if (name.IsKeyword(w)) return false;
    }
    if (type.kind != TokenKind::kWord || type.IsKeyword("as")) return false;
    size_t j = begin + 1;
    if (!ConvertType(tokens, &j).ok() || j != end) return false;
  }
  return !args.empty();
}

bool IsComparison(const Token& t) {
  static const char* const kOps[] = {"=", "<", ">", "<=", ">=", "<>", "!=", "=="};
  if (t.kind != TokenKind::kSymbol) return false;
  for (const char* op : kOps) {
    if (t.text == op) return true;
  }
  return false;
}

// One call being rewritten: its tokens and the engine's text of its arguments.
class Call {
 public:
  Call(std::string_view sql, const std::vector<Token>& tokens, size_t name, size_t close,
       std::vector<size_t> commas, const std::vector<Substitution>* outer)
      : sql_(sql),
        tokens_(tokens),
        name_(name),
        close_(close),
        commas_(std::move(commas)),
        outer_(outer) {}

  size_t args() const { return close_ == name_ + 2 ? 0 : commas_.size() + 1; }
  size_t begin(size_t k) const { return k == 0 ? name_ + 2 : commas_[k - 1] + 1; }
  size_t end(size_t k) const { return k + 1 == args() ? close_ : commas_[k]; }

  // The engine's text of argument k.
  Result<std::string> Arg(size_t k) const { return Fragment(begin(k), end(k), {}); }
  std::optional<Lambda> LambdaAt(size_t k) const {
    return k < args() ? ParseLambda(tokens_, begin(k), end(k)) : std::nullopt;
  }
  // The engine's text of a lambda's body, its parameters replaced by `values`.
  Result<std::string> Body(const Lambda& l, const std::vector<std::string>& values) const {
    std::vector<Substitution> subs;
    for (size_t p = 0; p < l.params.size() && p < values.size(); ++p) {
      subs.push_back({l.params[p], values[p]});
    }
    return Fragment(l.body_begin, l.body_end, subs);
  }
  // A name for a parameter the rewrite adds, distinct in nested rewrites.
  std::string Fresh(const char* stem) const {
    return std::string("__") + stem + std::to_string(tokens_[name_].begin) + "_" +
           std::to_string(sql_.size());
  }
  Edit Replace(std::string text) const {
    return {tokens_[name_].begin, tokens_[close_].end, std::move(text)};
  }
  const Token& name() const { return tokens_[name_]; }
  size_t name_index() const { return name_; }
  size_t close() const { return close_; }

 private:
  Result<std::string> Fragment(size_t from, size_t to,
                               const std::vector<Substitution>& subs) const {
    if (from >= to) return std::string();
    std::vector<Substitution> all = subs;  // the lambda's own parameters shadow the outer ones
    if (outer_ != nullptr) {
      for (const Substitution& o : *outer_) {
        bool shadowed = false;
        for (const Substitution& s : subs)
          shadowed = shadowed || AsciiLower(s.name) == AsciiLower(o.name);
        if (!shadowed) all.push_back(o);
      }
    }
    return RewriteFragment(
        sql_.substr(tokens_[from].begin, tokens_[to - 1].end - tokens_[from].begin), all);
  }

  std::string_view sql_;
  const std::vector<Token>& tokens_;
  size_t name_, close_;
  std::vector<size_t> commas_;
  const std::vector<Substitution>* outer_;
};

Status NotALambda(std::string_view sql, const Call& c, const char* shape) {
  return Status::InvalidArgument(c.name().text + " expects " + shape + " (at " +
                                 DescribePosition(sql, c.name().begin) + ")");
}

// A higher-order function's call rewritten (see the table above): true when `c` is one.
Result<bool> RewriteHigherOrder(std::string_view sql, const Call& c, std::vector<Edit>* edits) {
  const Token& t = c.name();
  const size_t n = c.args();
  if ((t.IsKeyword("transform") || t.IsKeyword("filter")) && n == 2) {
    auto l = c.LambdaAt(1);
    if (!l || l->params.size() > 2) return NotALambda(sql, c, "an array and a lambda x -> ...");
    SLUICE_ASSIGN_OR_RETURN(std::string xs, c.Arg(0));
    const char* fn = t.IsKeyword("transform") ? "list_transform(" : "list_filter(";
    if (l->params.size() == 1) {
      SLUICE_ASSIGN_OR_RETURN(std::string body, c.Body(*l, {l->params[0]}));
      edits->push_back(
          c.Replace(fn + xs + ", " + QuoteIdentifier(l->params[0]) + " -> " + body + ")"));
    } else {
      const std::string x = QuoteIdentifier(l->params[0]), i = QuoteIdentifier(l->params[1]);
      SLUICE_ASSIGN_OR_RETURN(std::string body, c.Body(*l, {x, "(" + i + " - 1)"}));
      edits->push_back(c.Replace(fn + xs + ", (" + x + ", " + i + ") -> " + body + ")"));
    }
    return true;
  }
  if ((t.IsKeyword("aggregate") || t.IsKeyword("reduce")) && (n == 3 || n == 4)) {
    auto merge = c.LambdaAt(2);
    auto finish = n == 4 ? c.LambdaAt(3) : std::nullopt;
    if (!merge || merge->params.size() != 2 ||
        (n == 4 && (!finish || finish->params.size() != 1))) {
      return NotALambda(sql, c, "an array, a start value, (acc, x) -> ... [and acc -> ...]");
    }
    SLUICE_ASSIGN_OR_RETURN(std::string xs, c.Arg(0));
    SLUICE_ASSIGN_OR_RETURN(std::string zero, c.Arg(1));
    const std::string acc = QuoteIdentifier(merge->params[0]),
                      x = QuoteIdentifier(merge->params[1]);
    SLUICE_ASSIGN_OR_RETURN(std::string body, c.Body(*merge, {acc, x}));
    std::string text =
        "list_reduce(" + xs + ", (" + acc + ", " + x + ") -> " + body + ", " + zero + ")";
    if (finish) {
      const std::string a = QuoteIdentifier(finish->params[0]);
      SLUICE_ASSIGN_OR_RETURN(std::string f, c.Body(*finish, {a}));
      text = "list_transform([" + text + "], " + a + " -> " + f + ")[1]";
    }
    edits->push_back(c.Replace(text));
    return true;
  }
  if ((t.IsKeyword("exists") || t.IsKeyword("forall")) && n == 2) {
    auto l = c.LambdaAt(1);
    if (!l || l->params.size() != 1) return NotALambda(sql, c, "an array and a lambda x -> ...");
    SLUICE_ASSIGN_OR_RETURN(std::string xs, c.Arg(0));
    const std::string x = QuoteIdentifier(l->params[0]);
    SLUICE_ASSIGN_OR_RETURN(std::string body, c.Body(*l, {x}));
    edits->push_back(
        c.Replace(std::string(t.IsKeyword("exists") ? "spark_exists" : "spark_forall") +
                  "(list_transform(" + xs + ", " + x + " -> " + body + "))"));
    return true;
  }
  if (t.IsKeyword("zip_with") && n == 3) {
    auto l = c.LambdaAt(2);
    if (!l || l->params.size() != 2) return NotALambda(sql, c, "two arrays and (x, y) -> ...");
    SLUICE_ASSIGN_OR_RETURN(std::string a, c.Arg(0));
    SLUICE_ASSIGN_OR_RETURN(std::string b, c.Arg(1));
    const std::string e = c.Fresh("z");
    SLUICE_ASSIGN_OR_RETURN(std::string body, c.Body(*l, {e + "[1]", e + "[2]"}));
    edits->push_back(
        c.Replace("list_transform(list_zip(" + a + ", " + b + "), " + e + " -> " + body + ")"));
    return true;
  }
  if ((t.IsKeyword("map_filter") || t.IsKeyword("transform_values") ||
       t.IsKeyword("transform_keys")) &&
      n == 2) {
    auto l = c.LambdaAt(1);
    if (!l || l->params.size() != 2) return NotALambda(sql, c, "a map and (k, v) -> ...");
    SLUICE_ASSIGN_OR_RETURN(std::string m, c.Arg(0));
    const std::string e = c.Fresh("e");
    SLUICE_ASSIGN_OR_RETURN(std::string body, c.Body(*l, {e + ".key", e + ".value"}));
    std::string text;
    if (t.IsKeyword("map_filter")) {
      text = "map_from_entries(list_filter(map_entries(" + m + "), " + e + " -> " + body + "))";
    } else {
      const bool keys = t.IsKeyword("transform_keys");
      text = "map_from_entries(list_transform(map_entries(" + m + "), " + e +
             " -> struct_pack(key := " + (keys ? body : e + ".key") +
             ", value := " + (keys ? e + ".value" : body) + ")))";
    }
    edits->push_back(c.Replace(text));
    return true;
  }
  if (t.IsKeyword("map_zip_with") && n == 3) {
    auto l = c.LambdaAt(2);
    if (!l || l->params.size() != 3) return NotALambda(sql, c, "two maps and (k, v1, v2) -> ...");
    SLUICE_ASSIGN_OR_RETURN(std::string a, c.Arg(0));
    SLUICE_ASSIGN_OR_RETURN(std::string b, c.Arg(1));
    const std::string e = c.Fresh("e");
    SLUICE_ASSIGN_OR_RETURN(std::string body, c.Body(*l, {e + ".key", e + ".v1", e + ".v2"}));
    edits->push_back(c.Replace("map_from_entries(list_transform(spark_map_zip(" + a + ", " + b +
                               "), " + e + " -> struct_pack(key := " + e +
                               ".key, value := " + body + ")))"));
    return true;
  }
  if (t.IsKeyword("array_sort") && n == 2) {
    auto l = c.LambdaAt(1);
    if (!l || l->params.size() != 2) return NotALambda(sql, c, "an array and (l, r) -> ...");
    SLUICE_ASSIGN_OR_RETURN(std::string xs, c.Arg(0));
    const std::string a = c.Fresh("a"), p = c.Fresh("p");
    SLUICE_ASSIGN_OR_RETURN(std::string body, c.Body(*l, {p + ".l", p + ".r"}));
    edits->push_back(c.Replace(
        "list_transform([" + xs + "], " + a + " -> spark_sort_by_comparison(" + a +
        ", list_transform(spark_array_pairs(" + a + "), " + p + " -> " + body + ")))[1]"));
    return true;
  }
  return false;
}

// arrays_zip(a, b, ...): a list of structs whose fields are named as Spark names them.
Result<std::string> ArraysZip(const std::vector<Token>& tokens, const Call& c) {
  std::string lists, fields;
  const std::string e = c.Fresh("z");
  const bool one = c.args() == 1;
  for (size_t k = 0; k < c.args(); ++k) {
    SLUICE_ASSIGN_OR_RETURN(std::string arg, c.Arg(k));
    size_t alias_at = kNoToken;
    std::string name = StructFieldName(tokens, c.begin(k), c.end(k), k, &alias_at, "");
    if (alias_at != kNoToken) name = std::to_string(k);
    lists += (k ? ", " : "") + arg;
    fields += std::string(k ? ", " : "") + QuoteIdentifier(name) + " := " + e +
              (one ? std::string() : "[" + std::to_string(k + 1) + "]");
  }
  return "list_transform(" + (one ? lists : "list_zip(" + lists + ")") + ", " + e +
         " -> struct_pack(" + fields + "))";
}

// The names of `AS (a, b)` after a generator call ending at `close` (then *end is the index after
// the ')'), or none.
std::vector<std::string> GeneratorAliases(const std::vector<Token>& tokens, size_t close,
                                          size_t* end) {
  std::vector<std::string> names;
  *end = close + 1;
  if (!tokens[close + 1].IsKeyword("as") || !tokens[close + 2].IsSymbol("(")) return names;
  size_t k = close + 3;
  while (IsName(tokens[k])) {
    names.push_back(tokens[k].text);
    k += tokens[k + 1].IsSymbol(",") ? 2 : 1;
  }
  if (!tokens[k].IsSymbol(")")) return {};
  *end = k + 1;
  return names;
}

// True for a call that gives a MAP whatever its arguments (so that explode of it gives keys and
// values): map(...), map_from_arrays, map_from_entries, str_to_map, map_concat, map_filter, ...
bool IsMapCall(const std::vector<Token>& tokens, size_t from, size_t to) {
  static const char* const kMaps[] = {
      "map",        "map_from_arrays",  "map_from_entries", "str_to_map",  "map_concat",
      "map_filter", "transform_values", "transform_keys",   "map_zip_with"};
  if (!(tokens[from].kind == TokenKind::kWord && tokens[from + 1].IsSymbol("("))) return false;
  if (CloseOf(tokens, from + 1, nullptr) + 1 != to) return false;
  for (const char* m : kMaps) {
    if (tokens[from].IsKeyword(m)) return true;
  }
  return false;
}

// Spark's generators in a SELECT list or after FROM (the engine's unnest; `e` a made name):
//   SELECT explode(<a map call>) [AS (k, v)]  unnest(list_transform(map_entries(m),
//                                               e -> struct_pack(key := e.key, ...)), max_depth :=
//                                               2)
//   SELECT posexplode(xs) [AS (p, c)]         CAST(unnest(range(0, len(xs))) AS INTEGER) AS pos,
//                                             unnest(xs) AS col
//   SELECT inline(xs)                         unnest(xs, max_depth := 2): a column per field
//   SELECT stack(n, a, b, c, d)               unnest([struct_pack(col0 := a, col1 := b), ...],
//                                               max_depth := 2): n rows, NULLs padded
//   FROM explode(xs) [t]                      FROM (SELECT unnest(xs) AS col) [t]
// True when `c` was one of them.
Result<bool> RewriteGenerator(std::string_view sql, const std::vector<Token>& tokens, const Call& c,
                              std::vector<Edit>* edits) {
  const Token& t = c.name();
  const bool from = tokens[c.name_index() - 1].IsKeyword("from");
  const size_t close = c.close();
  size_t end = close + 1;
  std::vector<std::string> aliases = GeneratorAliases(tokens, close, &end);
  auto replace = [&](std::string text) {
    edits->push_back({t.begin, tokens[end - 1].end, std::move(text)});
  };
  auto alias = [&](size_t k, const char* fallback) {
    return QuoteIdentifier(k < aliases.size() ? aliases[k] : std::string(fallback));
  };
  if (from) {
    if (!t.IsKeyword("explode") || c.args() != 1 || !aliases.empty()) return false;
    SLUICE_ASSIGN_OR_RETURN(std::string xs, c.Arg(0));
    replace("(SELECT unnest(" + xs + ") AS col)");
    return true;
  }
  if (t.IsKeyword("explode")) {
    if (c.args() != 1 || !IsMapCall(tokens, c.begin(0), c.end(0))) return false;
    SLUICE_ASSIGN_OR_RETURN(std::string m, c.Arg(0));
    const std::string e = c.Fresh("e");
    replace("unnest(list_transform(map_entries(" + m + "), " + e + " -> struct_pack(" +
            alias(0, "key") + " := " + e + ".key, " + alias(1, "value") + " := " + e +
            ".value)), max_depth := 2)");
    return true;
  }
  if (t.IsKeyword("posexplode")) {
    if (c.args() != 1) return false;
    SLUICE_ASSIGN_OR_RETURN(std::string xs, c.Arg(0));
    replace("CAST(unnest(range(0, len(" + xs + "))) AS INTEGER) AS " + alias(0, "pos") +
            ", unnest(" + xs + ") AS " + alias(1, "col"));
    return true;
  }
  if (t.IsKeyword("inline")) {
    if (c.args() != 1 || !aliases.empty()) return false;
    SLUICE_ASSIGN_OR_RETURN(std::string xs, c.Arg(0));
    replace("unnest(" + xs + ", max_depth := 2)");
    return true;
  }
  // stack(n, values...)
  const Token& n = tokens[c.begin(0)];
  if (c.args() < 2 || c.end(0) != c.begin(0) + 1 || n.kind != TokenKind::kNumber ||
      n.text.find_first_not_of("0123456789") != std::string::npos || std::stoul(n.text) == 0) {
    return Status::InvalidArgument(
        "stack: the number of rows must be a positive integer literal (at " +
        DescribePosition(sql, t.begin) + ")");
  }
  const size_t rows = std::stoul(n.text);
  const size_t values = c.args() - 1;
  const size_t columns = (values + rows - 1) / rows;
  std::string list;
  for (size_t r = 0; r < rows; ++r) {
    list += r ? ", struct_pack(" : "struct_pack(";
    for (size_t col = 0; col < columns; ++col) {
      const size_t k = 1 + r * columns + col;
      std::string v = "NULL";
      if (k < c.args()) {
        SLUICE_ASSIGN_OR_RETURN(v, c.Arg(k));
      }
      list += (col ? ", " : "") + alias(col, ("col" + std::to_string(col)).c_str()) + " := " + v;
    }
    list += ")";
  }
  replace("unnest([" + list + "], max_depth := 2)");
  return true;
}

// xs[i] -> spark_element(xs, i) (0-based for an array, a key for a map), where `open` is the '['
// of a subscript whose index is not a string literal (m['k'], s['field'] stay the engine's).
void RewriteSubscript(const std::vector<Token>& tokens, size_t open, std::vector<Edit>* edits) {
  if (open == 0) return;
  const Token& prev = tokens[open - 1];
  const bool operand_end =
      prev.IsSymbol(")") || prev.IsSymbol("]") || prev.kind == TokenKind::kQuotedIdent ||
      prev.kind == TokenKind::kBacktick ||
      (prev.kind == TokenKind::kWord && !IsClauseWord(prev) && !prev.IsKeyword("array"));
  if (!operand_end) return;
  std::vector<size_t> commas;
  const size_t close = CloseOf(tokens, open, &commas);
  if (close == kNoToken || close == open + 1 || !commas.empty()) return;
  if (close == open + 2 && tokens[open + 1].kind == TokenKind::kString) return;
  int depth = 0;
  for (size_t k = open + 1; k < close; ++k) {  // a slice xs[1:2] is the engine's
    if (tokens[k].IsSymbol("(") || tokens[k].IsSymbol("[")) ++depth;
    if (tokens[k].IsSymbol(")") || tokens[k].IsSymbol("]")) --depth;
    if (depth == 0 && tokens[k].IsSymbol(":")) return;
  }
  const size_t start = OperandStart(tokens, open);
  if (start == kNoToken) return;
  if (start > 0 && tokens[start - 1].IsSymbol(":")) return;  // parse_json(j):a[0] (json_paths.cc)
  edits->push_back({tokens[start].begin, tokens[start].begin, "spark_element("});
  edits->push_back({tokens[open].begin, tokens[open].end, ", "});
  edits->push_back({tokens[close].begin, tokens[close].end, ")"});
}

}  // namespace

Status RewriteFunctions(std::string_view sql, const std::vector<Token>& tokens,
                        std::vector<Edit>* edits, const std::vector<Substitution>* outer) {
  for (size_t i = 0; tokens[i].kind != TokenKind::kEnd; ++i) {
    const Token& t = tokens[i];
    if (t.IsSymbol("[")) {
      RewriteSubscript(tokens, i, edits);
      continue;
    }
    if (t.kind != TokenKind::kWord || !tokens[i + 1].IsSymbol("(")) continue;
    if (i > 0 && !ExpressionFollows(tokens[i - 1])) continue;
    std::vector<size_t> commas;
    const size_t open = i + 1;
    const size_t close = CloseOf(tokens, open, &commas);
    if (close == kNoToken) continue;
    const Call call(sql, tokens, i, close, commas, outer);
    const size_t args = call.args();
    if (t.IsKeyword("array")) {
      edits->push_back({t.begin, t.end, "list_value"});
    } else if (t.IsKeyword("map") && args >= 2 && args % 2 == 0) {
      edits->push_back({t.begin, tokens[open].end, "MAP {"});
      for (size_t k = 0; k < commas.size(); ++k) {
        edits->push_back({tokens[commas[k]].begin, tokens[commas[k]].end, k % 2 == 0 ? ":" : ","});
      }
      edits->push_back({tokens[close].begin, tokens[close].end, "}"});
    } else if (t.IsKeyword("struct") && args >= 1 && !tokens[open + 1].IsSymbol("*") &&
               !IsStructTypeDeclaration(tokens, [&] {
                 std::vector<std::pair<size_t, size_t>> spans;
                 for (size_t k = 0; k < args; ++k) spans.emplace_back(call.begin(k), call.end(k));
                 return spans;
               }())) {
      edits->push_back({t.begin, t.end, "struct_pack"});
      for (size_t k = 0; k < args; ++k) {
        size_t alias_at = kNoToken;
        std::string name = StructFieldName(tokens, call.begin(k), call.end(k), k + 1, &alias_at);
        const Token& first = tokens[call.begin(k)];
        edits->push_back({first.begin, first.begin, QuoteIdentifier(name) + " := "});
        if (alias_at != kNoToken) {
          edits->push_back({tokens[alias_at - 1].end, tokens[call.end(k) - 1].end, ""});
        }
      }
    } else if (t.IsKeyword("named_struct") && args >= 2 && args % 2 == 0) {
      edits->push_back({t.begin, t.end, "struct_pack"});
      for (size_t k = 0; k < args; k += 2) {
        const Token& name = tokens[call.begin(k)];
        if (call.end(k) != call.begin(k) + 1 || name.kind != TokenKind::kString) {
          return Status::InvalidArgument(
              "named_struct: the field names must be string literals (at " +
              DescribePosition(sql, name.begin) + ")");
        }
        edits->push_back({name.begin, tokens[commas[k]].end, QuoteIdentifier(name.text) + " :="});
      }
    } else if (t.IsKeyword("concat") && !HasLambda(tokens, open, close)) {
      if (args == 0) {
        edits->push_back({t.begin, tokens[close].end, "''"});
        continue;
      }
      edits->push_back({t.begin, tokens[open].end, "(("});
      for (size_t comma : commas) {
        edits->push_back({tokens[comma].begin, tokens[comma].end, ") || ("});
      }
      edits->push_back({tokens[close].begin, tokens[close].end, "))"});
    } else if ((t.IsKeyword("explode") || t.IsKeyword("posexplode") || t.IsKeyword("inline") ||
                t.IsKeyword("stack")) &&
               args >= 1 && i > 0 &&
               (tokens[i - 1].IsKeyword("select") || tokens[i - 1].IsSymbol(",") ||
                tokens[i - 1].IsKeyword("from"))) {
      SLUICE_ASSIGN_OR_RETURN(bool done, RewriteGenerator(sql, tokens, call, edits));
      if (done) i = close;
    } else if ((t.IsKeyword("listagg") || t.IsKeyword("string_agg")) &&
               tokens[close + 1].IsKeyword("within") && tokens[close + 2].IsKeyword("group") &&
               tokens[close + 3].IsSymbol("(") && tokens[close + 4].IsKeyword("order")) {
      // listagg(x, sep) WITHIN GROUP (ORDER BY y): the engine's string_agg(x, sep ORDER BY y).
      const size_t group_close = CloseOf(tokens, close + 3, nullptr);
      if (group_close == kNoToken) continue;
      const size_t from = tokens[close + 4].begin;
      SLUICE_ASSIGN_OR_RETURN(
          std::string order,
          RewriteFragment(sql.substr(from, tokens[group_close - 1].end - from), {}));
      edits->push_back({t.begin, t.end, "string_agg"});
      edits->push_back({tokens[close].begin, tokens[group_close].end, " " + order + ")"});
    } else if (t.IsKeyword("json_tuple") && args >= 2 && i > 0 &&
               (tokens[i - 1].IsKeyword("select") || tokens[i - 1].IsSymbol(",")) &&
               (tokens[close + 1].IsSymbol(",") || tokens[close + 1].IsKeyword("from") ||
                tokens[close + 1].kind == TokenKind::kEnd || tokens[close + 1].IsSymbol(")"))) {
      // A generator of one row: a column c<n> per key, each get_json_object(j, '$.key').
      SLUICE_ASSIGN_OR_RETURN(std::string json, call.Arg(0));
      std::string text;
      for (size_t k = 1; k < args; ++k) {
        SLUICE_ASSIGN_OR_RETURN(std::string key, call.Arg(k));
        text += (k > 1 ? ", " : "") + std::string("get_json_object(") + json + ", '$.' || " + key +
                ") AS c" + std::to_string(k - 1);
      }
      edits->push_back(call.Replace(text));
      i = close;
    } else if (t.IsKeyword("arrays_zip") && args >= 1) {
      SLUICE_ASSIGN_OR_RETURN(std::string text, ArraysZip(tokens, call));
      edits->push_back(call.Replace(text));
      i = close;
    } else {
      if (i > 0 && tokens[i - 1].IsSymbol(")")) continue;  // count(*) FILTER (WHERE ...)
      if (HasLambda(tokens, open, close)) {
        SLUICE_ASSIGN_OR_RETURN(bool done, RewriteHigherOrder(sql, call, edits));
        if (done) {
          i = close;  // the arguments were rewritten with the call
          continue;
        }
        if (t.IsKeyword("transform") || t.IsKeyword("filter")) continue;
      }
      const bool quantifier =
          (i > 0 && IsComparison(tokens[i - 1])) || tokens[open + 1].IsKeyword("select");
      for (const Rename& r : kRenames) {
        if (!t.IsKeyword(r.spark) || (r.args != kAny && r.args != args)) continue;
        if (HasLambda(tokens, open, close)) continue;
        const bool reserved = t.IsKeyword("some") || t.IsKeyword("any") || t.IsKeyword("char");
        if (reserved && quantifier) continue;  // x = ANY (SELECT ...) is the engine's
        edits->push_back({t.begin, t.end, r.engine});
        break;
      }
    }
  }
  return Status::OK();
}

}  // namespace sluice::dialect
