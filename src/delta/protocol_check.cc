#include "delta/protocol_check.h"

#include <algorithm>
#include <string>

#include "delta/column_mapping.h"

namespace sluice::delta {

namespace {

constexpr int kMaxReaderVersion = 3;

std::string WhyRefused(const std::string& feature) {
  if (feature == "variantType" || feature == "variantType-preview" ||
      feature == "variantShredding" || feature == "variantShredding-preview") {
    return "the variant type is not implemented";
  }
  if (feature == "catalogManaged" || feature == "catalogOwned-preview") {
    return "catalog-managed tables need a catalog to resolve staged commits";
  }
  if (feature == "vacuumProtocolCheck") return "";
  return "unknown feature";
}

}  // namespace

const std::vector<std::string>& SupportedReaderFeatures() {
  // timestampNtz: timestamp_ntz columns are read as TIMESTAMP (no time zone; schema.cc).
  // typeWidening (and its preview name): files written before a type change hold the narrower
  // type, which the scan casts to the table's (scan.cc). v2Checkpoint: UUID-named checkpoints
  // and their sidecar files (log_segment.h, checkpoint_reader.cc).
  static const std::vector<std::string> kFeatures = {
      "vacuumProtocolCheck", "columnMapping", "deletionVectors",     "timestampNtz",
      "typeWidening",        "v2Checkpoint",  "typeWidening-preview"};
  return kFeatures;
}

Status CheckReadSupported(const Protocol& protocol, const Metadata& metadata) {
  int rv = protocol.min_reader_version;
  if (rv < 1 || rv > kMaxReaderVersion) {
    std::string features;
    for (const std::string& f : protocol.reader_features.value_or(std::vector<std::string>{})) {
      features += (features.empty() ? "" : ", ") + f;
    }
    return Status::NotSupported(
        "Unsupported Delta protocol reader version " + std::to_string(rv) +
        " (Sluice reads reader versions 1, 2 and 3 with supported table features)" +
        (features.empty() ? "" : "; the table declares reader features [" + features + "]"));
  }
  // Column mapping modes none, name and id are read (scan.cc reads physical names); any other
  // mode is refused here, whatever the protocol says.
  SLUICE_RETURN_NOT_OK(ColumnMappingModeOf(metadata).status());
  if (rv == 3) {
    for (const std::string& f : protocol.reader_features.value_or(std::vector<std::string>{})) {
      const auto& supported = SupportedReaderFeatures();
      bool ok = std::find(supported.begin(), supported.end(), f) != supported.end();
      if (!ok) {
        std::string why = WhyRefused(f);
        return Status::NotSupported("Unsupported Delta reader feature '" + f + "': " + why);
      }
    }
  }
  return Status::OK();
}

}  // namespace sluice::delta
