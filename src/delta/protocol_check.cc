#include "delta/protocol_check.h"

#include <algorithm>
#include <string>

namespace sluice::delta {

namespace {

constexpr int kMaxReaderVersion = 3;

std::string WhyRefused(const std::string& feature) {
  if (feature == "columnMapping") return "column mapping (mode id/name) is not implemented";
  if (feature == "v2Checkpoint") return "V2 (UUID/sidecar) checkpoints are not implemented";
  if (feature == "typeWidening" || feature == "typeWidening-preview")
    return "type widening is not implemented";
  if (feature == "timestampNtz") return "timestamp_ntz columns are not enabled in this reader";
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

std::string ColumnMappingMode(const Metadata& metadata) {
  return metadata.Config("delta.columnMapping.mode").value_or("none");
}

}  // namespace

const std::vector<std::string>& SupportedReaderFeatures() {
  static const std::vector<std::string> kFeatures = {"vacuumProtocolCheck", "columnMapping",
                                                     "deletionVectors"};
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
  std::string mode = ColumnMappingMode(metadata);
  if (rv == 3) {
    for (const std::string& f : protocol.reader_features.value_or(std::vector<std::string>{})) {
      const auto& supported = SupportedReaderFeatures();
      bool ok = std::find(supported.begin(), supported.end(), f) != supported.end();
      if (f == "columnMapping" && mode != "none") ok = false;
      if (!ok) {
        std::string why = WhyRefused(f);
        if (f == "columnMapping") why += " (delta.columnMapping.mode=" + mode + ")";
        return Status::NotSupported("Unsupported Delta reader feature '" + f + "': " + why);
      }
    }
  }
  if (mode != "none") {
    return Status::NotSupported(
        "Unsupported Delta reader feature 'columnMapping': column mapping mode '" + mode +
        "' is not implemented (reading by display name would return "
        "all-null columns)");
  }
  return Status::OK();
}

}  // namespace sluice::delta
