#include "delta/schema_evolution.h"

#include <cctype>
#include <set>

#include "common/strings.h"
#include "delta/schema.h"
#include "delta/values.h"

namespace sluice::delta {

using engine::DataType;
using engine::Field;
using engine::TypeId;

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

int IntRank(TypeId id) {
  switch (id) {
    case TypeId::kTinyInt:
      return 1;
    case TypeId::kSmallInt:
      return 2;
    case TypeId::kInteger:
      return 3;
    case TypeId::kBigInt:
      return 4;
    default:
      return 0;
  }
}

bool SafeWidening(const DataType& from, const DataType& to) {
  if (from.id == TypeId::kNull) return true;
  int a = IntRank(from.id), b = IntRank(to.id);
  if (a > 0 && b > 0) return a < b;
  return from.id == TypeId::kFloat && to.id == TypeId::kDouble;
}

const Field* FindChild(const std::vector<Field>& fields, std::string_view name) {
  for (const Field& f : fields) {
    if (Lower(f.name) == Lower(name)) return &f;
  }
  return nullptr;
}

Status Mismatch(const std::string& path, const DataType& data, const DataType& table) {
  return Status::InvalidArgument("schema mismatch: column '" + path + "' has type " +
                                 DeltaTypeName(data) + " in the data but " + DeltaTypeName(table) +
                                 " in the table; only adding columns (mergeSchema) is allowed");
}

// Merges a data type into a table type. `changed` is set when the table type grows (new
// struct fields). Returns the merged table type.
Result<DataType> MergeType(const std::string& path, const DataType& table, const DataType& data,
                           bool merge_schema, bool* changed) {
  if (table == data) return table;
  if (table.id == TypeId::kStruct && data.id == TypeId::kStruct) {
    DataType out = table;
    for (const Field& df : data.children) {
      const Field* tf = FindChild(table.children, df.name);
      std::string child_path = path + "." + df.name;
      if (tf == nullptr) {
        if (!merge_schema) {
          return Status::InvalidArgument("schema mismatch: field '" + child_path + "' (" +
                                         DeltaTypeName(df.type) +
                                         ") is not in the table schema; set mergeSchema to add it");
        }
        Field added = df;
        added.nullable = true;
        out.children.push_back(std::move(added));
        *changed = true;
        continue;
      }
      SLUICE_ASSIGN_OR_RETURN(DataType merged,
                              MergeType(child_path, tf->type, df.type, merge_schema, changed));
      // One field of the table per name (Delta's names are unique case-insensitively).
      for (Field& of : out.children) {
        if (Lower(of.name) == Lower(df.name)) {
          of.type = std::move(merged);
          break;
        }
      }
    }
    return out;
  }
  if (table.id == TypeId::kList && data.id == TypeId::kList && !table.children.empty() &&
      !data.children.empty()) {
    DataType out = table;
    SLUICE_ASSIGN_OR_RETURN(out.children[0].type,
                            MergeType(path + ".element", table.children[0].type,
                                      data.children[0].type, merge_schema, changed));
    return out;
  }
  if (table.id == TypeId::kMap && data.id == TypeId::kMap && table.children.size() == 2 &&
      data.children.size() == 2) {
    DataType out = table;
    SLUICE_ASSIGN_OR_RETURN(out.children[0].type,
                            MergeType(path + ".key", table.children[0].type, data.children[0].type,
                                      merge_schema, changed));
    SLUICE_ASSIGN_OR_RETURN(out.children[1].type,
                            MergeType(path + ".value", table.children[1].type,
                                      data.children[1].type, merge_schema, changed));
    return out;
  }
  if (SafeWidening(data, table)) return table;
  return Mismatch(path, data, table);
}

}  // namespace

std::string DeltaTypeName(const DataType& type) {
  switch (type.id) {
    case TypeId::kStruct: {
      std::string s = "struct<";
      for (size_t i = 0; i < type.children.size(); ++i) {
        if (i > 0) s += ",";
        s += type.children[i].name + ":" + DeltaTypeName(type.children[i].type);
      }
      return s + ">";
    }
    case TypeId::kList:
      return "array<" +
             (type.children.empty() ? std::string("?") : DeltaTypeName(type.children[0].type)) +
             ">";
    case TypeId::kMap:
      if (type.children.size() != 2) return "map<?>";
      return "map<" + DeltaTypeName(type.children[0].type) + "," +
             DeltaTypeName(type.children[1].type) + ">";
    case TypeId::kNull:
      return "void";
    default: {
      auto name = DeltaPrimitiveName(type);
      return name.ok() ? *name : type.ToSql();
    }
  }
}

Result<WriteSchemaPlan> PlanWriteSchema(const engine::Schema& table_schema,
                                        const engine::Schema& data_schema, bool merge_schema) {
  WriteSchemaPlan plan;
  plan.table_schema = table_schema;
  std::set<std::string> seen;
  for (const Field& df : data_schema) {
    if (!seen.insert(Lower(df.name)).second) {
      return Status::InvalidArgument("the data has column '" + df.name + "' more than once");
    }
  }
  // Data columns: match, merge or refuse.
  for (const Field& df : data_schema) {
    Field* tf = nullptr;
    for (Field& f : plan.table_schema) {
      if (Lower(f.name) == Lower(df.name)) tf = &f;
    }
    if (tf == nullptr) {
      if (!merge_schema) {
        return Status::InvalidArgument("schema mismatch: column '" + df.name + "' (" +
                                       DeltaTypeName(df.type) +
                                       ") is not in the table schema; set mergeSchema to add it");
      }
      if (df.type.id == TypeId::kNull) {
        return Status::InvalidArgument("cannot add column '" + df.name +
                                       "' of type void (an untyped NULL column)");
      }
      SLUICE_RETURN_NOT_OK_CTX(SchemaToJson({df}).status(), "column '" + df.name + "'");
      Field added = df;
      added.nullable = true;
      plan.table_schema.push_back(std::move(added));
      plan.schema_changed = true;
      continue;
    }
    bool changed = false;
    SLUICE_ASSIGN_OR_RETURN(DataType merged,
                            MergeType(tf->name, tf->type, df.type, merge_schema, &changed));
    if (changed) {
      tf->type = std::move(merged);
      plan.schema_changed = true;
    }
  }
  // Projection in table order.
  plan.identity = data_schema.size() == plan.table_schema.size();
  for (size_t i = 0; i < plan.table_schema.size(); ++i) {
    const Field& tf = plan.table_schema[i];
    const Field* df = FindChild(data_schema, tf.name);
    if (df == nullptr) {
      if (!tf.nullable) {
        return Status::InvalidArgument("column '" + tf.name +
                                       "' is NOT NULL in the table but missing from the data");
      }
      plan.projection.push_back("CAST(NULL AS " + tf.type.ToSql() + ") AS " +
                                QuoteIdentifier(tf.name));
      plan.identity = false;
      continue;
    }
    if (!tf.nullable) plan.not_null_columns.push_back(df->name);
    if (i >= data_schema.size() || data_schema[i].name != tf.name ||
        !(data_schema[i].type == tf.type)) {
      plan.identity = false;
    }
    if (df->type == tf.type) {
      plan.projection.push_back(QuoteIdentifier(df->name) + " AS " + QuoteIdentifier(tf.name));
    } else {
      plan.projection.push_back("CAST(" + QuoteIdentifier(df->name) + " AS " + tf.type.ToSql() +
                                ") AS " + QuoteIdentifier(tf.name));
    }
  }
  return plan;
}

Result<engine::Schema> AddColumns(const engine::Schema& table_schema,
                                  const std::vector<Field>& added) {
  engine::Schema out = table_schema;
  for (const Field& f : added) {
    if (FindChild(out, f.name) != nullptr) {
      return Status::InvalidArgument("cannot add column '" + f.name +
                                     "': a column of that name already exists");
    }
    SLUICE_RETURN_NOT_OK_CTX(SchemaToJson({f}).status(), "column '" + f.name + "'");
    Field c = f;
    c.nullable = true;
    out.push_back(std::move(c));
  }
  return out;
}

Result<std::vector<std::string>> ResolvePartitionColumns(
    const engine::Schema& schema, const std::vector<std::string>& partition_columns) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& p : partition_columns) {
    const Field* f = FindChild(schema, p);
    if (f == nullptr)
      return Status::InvalidArgument("partition column '" + p + "' is not in the schema");
    if (!seen.insert(Lower(p)).second)
      return Status::InvalidArgument("partition column '" + p + "' given twice");
    switch (f->type.id) {
      case TypeId::kStruct:
      case TypeId::kList:
      case TypeId::kMap:
      case TypeId::kBlob:
      case TypeId::kNull:
        return Status::InvalidArgument("cannot partition by column '" + p + "' of type " +
                                       DeltaTypeName(f->type));
      default:
        break;
    }
    out.push_back(f->name);
  }
  if (!partition_columns.empty() && out.size() == schema.size()) {
    return Status::InvalidArgument(
        "cannot partition by every column: a Delta table needs at least one data column");
  }
  return out;
}

}  // namespace sluice::delta
