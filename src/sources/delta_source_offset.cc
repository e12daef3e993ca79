#include "sources/delta_source_offset.h"

#include <nlohmann/json.hpp>

namespace sluice::sources {

std::string DeltaSourceOffset::ToJson() const {
  nlohmann::ordered_json j;
  j["sourceVersion"] = AtMetadataChange() ? kMetadataChangeSourceVersion : kSourceVersion;
  j["reservoirId"] = reservoir_id;
  j["reservoirVersion"] = reservoir_version;
  j["index"] = index;
  j["isStartingVersion"] = is_starting_version;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<DeltaSourceOffset> DeltaSourceOffset::Parse(const std::string& json) {
  auto bad = [&](const std::string& why) {
    return Status::Corruption("invalid Delta source offset '" + json + "': " + why);
  };
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  auto sv = j.find("sourceVersion");
  if (sv == j.end() || !sv->is_number_integer()) return bad("missing integer sourceVersion");
  if (sv->get<int64_t>() > kMetadataChangeSourceVersion || sv->get<int64_t>() < 1) {
    return Status::NotSupported(
        "Delta source offset '" + json + "' has sourceVersion " +
        std::to_string(sv->get<int64_t>()) + "; this version of Sluice reads sourceVersion 1 to " +
        std::to_string(kMetadataChangeSourceVersion) + ": upgrade Sluice to read this checkpoint");
  }
  DeltaSourceOffset o;
  auto id = j.find("reservoirId");
  if (id == j.end() || !id->is_string()) return bad("missing string reservoirId");
  o.reservoir_id = id->get<std::string>();
  auto v = j.find("reservoirVersion");
  if (v == j.end() || !v->is_number_integer() || v->get<int64_t>() < 0)
    return bad("missing reservoirVersion");
  o.reservoir_version = v->get<int64_t>();
  auto i = j.find("index");
  if (i == j.end() || !i->is_number_integer()) return bad("missing index");
  o.index = i->get<int64_t>();
  if (o.index < kBaseIndex && !o.AtMetadataChange()) return bad("index below -1");
  auto s = j.find("isStartingVersion");
  if (s == j.end() || !s->is_boolean()) return bad("missing boolean isStartingVersion");
  o.is_starting_version = s->get<bool>();
  return o;
}

}  // namespace sluice::sources
