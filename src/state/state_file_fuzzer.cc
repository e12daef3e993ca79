// libFuzzer target for the parsers of state checkpoint files (docs/architecture.md "Conventions":
// every parser of bytes from outside has one). Build with clang: -DSLUICE_FUZZ=ON (see
// CMakeLists.txt), then
//   build/<dir>/src/state/state_file_fuzzer -max_total_time=60
// The first byte picks the parser; the rest is the file. A crash, a sanitizer report or an
// accepted file whose records cannot be walked is a bug.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "state/operator_metadata.h"
#include "state/state_file_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice::state;
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
    case 1: {
      const StateFileKind kind =
          data[0] % 4 == 0 ? StateFileKind::kChangelog : StateFileKind::kSnapshot;
      // The version is taken from the header so that valid files are reachable.
      int64_t version = 0;
      if (bytes.size() >= 16) {
        for (int i = 0; i < 8; ++i) {
          version |= int64_t{static_cast<uint8_t>(bytes[8 + static_cast<size_t>(i)])} << (8 * i);
        }
      }
      auto info = ValidateStateFile(bytes, "fuzz", kind, version);
      if (info.ok()) {
        int64_t n = 0;
        sluice::Status st = ForEachStateRecord(bytes, [&](const StateRecord&) {
          ++n;
          return sluice::Status::OK();
        });
        if (!st.ok() || n != info->num_records) std::abort();
      }
      break;
    }
    case 2: {
      auto m = DecodeOperatorMetadata(bytes, "fuzz");
      if (m.ok()) {
        auto again = DecodeOperatorMetadata(EncodeOperatorMetadata(*m), "fuzz");
        if (!again.ok() || again->operator_name != m->operator_name) std::abort();
      }
      break;
    }
    default: {
      auto s = DecodeStateSchema(bytes, "fuzz");
      if (s.ok()) {
        auto again = DecodeStateSchema(EncodeStateSchema("op", "default", *s), "fuzz");
        if (!again.ok() || again->key.size() != s->key.size()) std::abort();
      }
      break;
    }
  }
  return 0;
}
