// Runs the Delta log fuzz target (delta_log_fuzzer.cc) under the regular build (g++ included):
// every seed of fuzz_corpus/, every prefix of it, and deterministic byte mutations of it. The
// target aborts on a property violation, so a failure here is a crash of this test; the
// assertions below check that the corpus was found and that the valid seeds parse.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "delta/actions.h"
#include "delta/schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace sluice::delta {
namespace {

std::vector<std::string> Corpus() {
  std::vector<std::string> out;
  for (const auto& entry :
       std::filesystem::directory_iterator(SLUICE_SOURCE_DIR "/src/delta/fuzz_corpus")) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    out.push_back(ss.str());
  }
  return out;
}

int FuzzOne(const std::string& input) {
  return LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

TEST(DeltaLogFuzzTest, SeedsParse) {
  std::vector<std::string> corpus = Corpus();
  ASSERT_GE(corpus.size(), 8u);
  int commits = 0, schemas = 0;
  for (const std::string& seed : corpus) {
    ASSERT_FALSE(seed.empty());
    std::string_view body(seed.data() + 1, seed.size() - 1);
    if (seed[0] == '0' && body.find("not json") == std::string_view::npos &&
        body.find("\"size\":1}}") == std::string_view::npos) {
      auto actions = ParseCommitFile(body, "seed");
      EXPECT_TRUE(actions.ok()) << actions.status().ToString();
      ++commits;
    }
    if (seed[0] == '2') {
      auto schema = ParseSchemaString(body);
      EXPECT_TRUE(schema.ok()) << schema.status().ToString();
      ++schemas;
    }
    EXPECT_EQ(FuzzOne(seed), 0);
  }
  EXPECT_GE(commits, 4);
  EXPECT_GE(schemas, 1);
}

TEST(DeltaLogFuzzTest, PrefixesAndMutationsDoNotCrash) {
  int64_t runs = 0;
  for (const std::string& seed : Corpus()) {
    for (size_t n = 0; n <= seed.size(); ++n) {
      FuzzOne(seed.substr(0, n));
      ++runs;
    }
    // Each byte replaced by a few values that break JSON structure or numbers.
    for (size_t i = 1; i < seed.size(); ++i) {
      for (char c : {'\0', '"', '{', ']', '9', '-', '\xff'}) {
        std::string m = seed;
        m[i] = c;
        FuzzOne(m);
        ++runs;
      }
    }
    // Every parser on every seed body.
    for (char selector : {'0', '1', '2', '3'}) {
      std::string m = seed;
      m[0] = selector;
      FuzzOne(m);
      ++runs;
    }
  }
  EXPECT_GT(runs, 10000);
}

}  // namespace
}  // namespace sluice::delta
