// SQL text helpers shared by the AUTO CDC sink's SCD type 1 and type 2 paths (auto_cdc_sink.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "engine/engine.h"

namespace sluice::sql::auto_cdc {

// Names of the temporary relations and helper columns of one batch.
inline constexpr char kInput[] = "__cdc_input";
inline constexpr char kChanges[] = "__cdc_changes";
inline constexpr char kEvents[] = "__cdc_events";
inline constexpr char kSeq[] = "__cdc_seq";
inline constexpr char kDelete[] = "__cdc_delete";
// The state table's columns besides the keys.
inline constexpr char kStateSeq[] = "__sequence";
inline constexpr char kStateDeleted[] = "__deleted";
// SCD type 2 history columns of the target.
inline constexpr char kStartAt[] = "__START_AT";
inline constexpr char kEndAt[] = "__END_AT";

// "name" with embedded quotes doubled.
inline std::string Q(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// prefix."a", prefix."b", ...
inline std::string List(const std::vector<std::string>& cols, const std::string& prefix = "") {
  std::string out;
  for (const auto& c : cols) out += (out.empty() ? "" : ", ") + prefix + Q(c);
  return out;
}

// keys of `a` IS NOT DISTINCT FROM keys of `b` (NULL keys are equal, as in the Delta sink).
inline std::string KeysMatch(const std::vector<std::string>& keys, const std::string& a,
                             const std::string& b) {
  std::string out;
  for (const auto& k : keys) {
    out +=
        (out.empty() ? "" : " AND ") + a + "." + Q(k) + " IS NOT DISTINCT FROM " + b + "." + Q(k);
  }
  return out;
}

// The BIGINT in the first cell of `sql`'s result (0 when NULL or no row).
inline Result<int64_t> CountRows(engine::Connection* conn, const std::string& sql) {
  SLUICE_ASSIGN_OR_RETURN(engine::Batch b, conn->Query(sql));
  std::optional<std::string> v = b.num_rows() > 0 ? b.GetString(0, 0) : std::nullopt;
  return v ? std::stoll(*v) : 0;
}

inline int64_t NowMs() { return WallClockMs(); }

}  // namespace sluice::sql::auto_cdc
