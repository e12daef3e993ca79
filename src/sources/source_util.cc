#include "sources/source_util.h"

#include <algorithm>

#include "common/strings.h"
#include "delta/log_segment.h"
#include "engine/registered_batch.h"

#include "sources/source_options.h"

namespace sluice::sources {

std::string SchemaToText(const engine::Schema& schema) {
  std::string out;
  for (const auto& f : schema) out += (out.empty() ? "" : ", ") + f.name + " " + f.type.ToSql();
  return out;
}

Result<engine::Batch> EmptyBatch(engine::Connection* conn, const engine::Schema& schema) {
  (void)conn;
  return engine::EmptyBatch(schema);
}

bool SameSchema(const engine::Schema& a, const engine::Schema& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i].name) != AsciiLower(b[i].name) || !(a[i].type == b[i].type)) return false;
  }
  return true;
}

bool ReadCompatible(const engine::Schema& data, const engine::Schema& reader) {
  for (const auto& f : data) {
    bool found = false;
    for (const auto& r : reader) {
      if (AsciiLower(r.name) == AsciiLower(f.name)) {
        found = r.type == f.type;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

Result<int64_t> LatestTableVersion(fs::FileSystem* fs, const std::string& table_path,
                                   const std::string& description, std::optional<int64_t> cap) {
  SLUICE_ASSIGN_OR_RETURN_CTX(auto listing, delta::ListLog(fs, table_path), description);
  auto v = listing.LatestVersion();
  if (!v) return Status::NotFound(description + ": the table has no commits");
  int64_t latest = v->value();
  if (cap) latest = std::min(latest, *cap);
  return latest;
}

}  // namespace sluice::sources
