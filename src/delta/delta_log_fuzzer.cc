// libFuzzer target for the Delta log JSON parsers (docs/architecture.md "Conventions": every parser
// of bytes from outside has one): commit files, single action objects, schemaString and string
// maps. Build with clang: -DSLUICE_FUZZ=ON (src/delta/CMakeLists.txt), then
//   build/<dir>/src/delta/delta_log_fuzzer -max_total_time=60 src/delta/fuzz_corpus
// Under g++ the same function runs the seed corpus and deterministic mutations of it as a unit
// test (delta_log_fuzz_test.cc).
//
// The first byte picks the parser ('0' commit file, '1' one action object, '2' schemaString,
// '3' string map); the rest is the input. A crash, a sanitizer report, or an accepted input that
// does not survive serialization and parsing again is a bug (std::abort).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "delta/actions.h"
#include "delta/schema.h"

namespace {

// Serialize -> parse must give the same actions in the same order, and a second round trip must
// reproduce the first one's text exactly.
void CheckRoundTrip(const std::vector<sluice::delta::Action>& actions) {
  using sluice::delta::ActionName;
  const std::string text = sluice::delta::SerializeCommit(actions);
  auto again = sluice::delta::ParseCommitFile(text, "round trip");
  if (!again.ok() || again->size() != actions.size()) std::abort();
  for (size_t i = 0; i < actions.size(); ++i) {
    if (ActionName((*again)[i]) != ActionName(actions[i])) std::abort();
  }
  if (sluice::delta::SerializeCommit(*again) != text) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      auto actions = sluice::delta::ParseCommitFile(bytes, "fuzz.json");
      if (actions.ok()) CheckRoundTrip(*actions);
      break;
    }
    case 1: {
      auto actions = sluice::delta::ParseActions(bytes);
      if (actions.ok()) CheckRoundTrip(*actions);
      break;
    }
    case 2: {
      auto schema = sluice::delta::ParseSchemaString(bytes);
      if (schema.ok()) {
        auto json = sluice::delta::SchemaToJson(schema->fields, schema->metadata);
        if (json.ok()) {
          auto again = sluice::delta::ParseSchemaString(*json);
          if (!again.ok() || !(again->fields == schema->fields)) std::abort();
        }
      }
      break;
    }
    default: {
      auto map = sluice::delta::ParseStringMapJson(bytes, "fuzz");
      (void)map;
      break;
    }
  }
  return 0;
}
