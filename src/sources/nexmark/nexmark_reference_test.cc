// The generator against the reference generator of the shared Nexmark notes (../shared/tools/
// nexmark_ref.py beside the clone): byte-for-byte equal JSON lines for 100,000 events with the
// default parameters and with two non-default sets. It needs ../shared, so it is labelled
// acceptance (`make acceptance`); `make test` pins the same output by its digest
// (nexmark_json_test.cc, DefaultStreamDigestIsTheReferences).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sources/nexmark/nexmark_json.h"

namespace sluice::nexmark {
namespace {

const char kReference[] = SLUICE_SOURCE_DIR "/../shared/tools/nexmark_ref.py";
const char kParamsHelper[] = SLUICE_SOURCE_DIR "/src/sources/nexmark/nexmark_ref_params.py";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/nexmark_" + std::to_string(getpid()) + "_" + name;
}

// Points at the first differing line, so that a mismatch is readable.
void ExpectSameBytes(const std::string& want, const std::string& got) {
  if (want == got) return;
  size_t line = 1, pos = 0;
  while (pos < want.size() && pos < got.size() && want[pos] == got[pos]) {
    if (want[pos] == '\n') ++line;
    ++pos;
  }
  const size_t line_start_w = want.rfind('\n', pos == 0 ? 0 : pos - 1);
  const size_t from = line_start_w == std::string::npos ? 0 : line_start_w + 1;
  ADD_FAILURE() << "JSON differs from the reference at byte " << pos << " (line " << line
                << "); sizes " << want.size() << " (reference) vs " << got.size() << "\n"
                << "reference: " << want.substr(from, want.find('\n', from) - from) << "\n"
                << "sluice:    " << got.substr(from, got.find('\n', from) - from);
}

// Runs a shell command; fails the test (not skips) when python3 or the reference is missing.
bool RunReference(const std::string& command) {
  if (std::system("command -v python3 >/dev/null 2>&1") != 0) {
    ADD_FAILURE() << "python3 is not on PATH: the Nexmark conformance test needs it to run "
                  << kReference;
    return false;
  }
  if (!std::ifstream(kReference).good()) {
    ADD_FAILURE() << "the reference generator is missing: " << kReference;
    return false;
  }
  const int rc = std::system(command.c_str());
  if (rc != 0) {
    ADD_FAILURE() << "reference command failed (status " << rc << "): " << command;
    return false;
  }
  return true;
}

TEST(NexmarkJsonTest, First100kEventsEqualTheReferenceByteForByte) {
  const std::string ref_out = TempPath("ref_default.jsonl");
  // The reference's own command line: N and the output file (it prints statistics on stdout).
  ASSERT_TRUE(RunReference("python3 '" + std::string(kReference) + "' 100000 '" + ref_out +
                           "' >/dev/null"));
  const std::string want = ReadFile(ref_out);
  std::remove(ref_out.c_str());
  ASSERT_GT(want.size(), 30000000u);  // ~331 bytes per event

  std::ostringstream got;
  const Status s = EmitJson(NexmarkConfig{}, 0, 100000, got);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectSameBytes(want, got.str());
}

struct ParamSet {
  const char* name;
  std::vector<std::pair<std::string, int64_t>> params;
};
void PrintTo(const ParamSet& set, std::ostream* os) { *os << set.name; }

// Applies nexmark_emit/nexmark_ref_params.py parameter names to a config.
void Apply(const std::string& name, int64_t v, NexmarkConfig* c, int64_t* first_event) {
  if (name == "rate")
    c->events_per_second = v;
  else if (name == "generators")
    c->num_event_generators = v;
  else if (name == "base-time")
    c->base_time_ms = v;
  else if (name == "first-id")
    c->first_event_id = v;
  else if (name == "first-num")
    c->first_event_number = v;
  else if (name == "first-event")
    *first_event = v;
  else if (name == "person-proportion")
    c->person_proportion = v;
  else if (name == "auction-proportion")
    c->auction_proportion = v;
  else if (name == "bid-proportion")
    c->bid_proportion = v;
  else if (name == "hot-auction-ratio")
    c->hot_auction_ratio = v;
  else if (name == "hot-bidders-ratio")
    c->hot_bidders_ratio = v;
  else if (name == "hot-sellers-ratio")
    c->hot_sellers_ratio = v;
  else if (name == "in-flight-auctions")
    c->num_in_flight_auctions = v;
  else if (name == "active-people")
    c->num_active_people = v;
  else
    FAIL() << "unknown parameter " << name;
}

class NexmarkJsonParamsTest : public ::testing::TestWithParam<ParamSet> {};

TEST_P(NexmarkJsonParamsTest, NonDefaultParametersEqualTheReferenceByteForByte) {
  const ParamSet& set = GetParam();
  NexmarkConfig config;
  int64_t first_event = 0;
  std::string args;
  for (const auto& [name, value] : set.params) {
    Apply(name, value, &config, &first_event);
    args += " --" + name + "=" + std::to_string(value);
  }
  const int64_t n = 100000;
  const std::string ref_out = TempPath(std::string("ref_") + set.name + ".jsonl");
  ASSERT_TRUE(RunReference("python3 '" + std::string(kParamsHelper) + "' '" + kReference + "' " +
                           std::to_string(n) + " '" + ref_out + "'" + args));
  const std::string want = ReadFile(ref_out);
  std::remove(ref_out.c_str());
  ASSERT_GT(want.size(), 10000000u);

  std::ostringstream got;
  const Status s = EmitJson(config, first_event, n, got);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectSameBytes(want, got.str());
}

INSTANTIATE_TEST_SUITE_P(Reference, NexmarkJsonParamsTest,
                         ::testing::Values(
                             // Flink V1-like timing and ids (first id/number 1), another kind mix
                             // and skew, a start deep into the stream.
                             ParamSet{"flinklike",
                                      {{"rate", 10000000},
                                       {"generators", 8},
                                       {"first-id", 1},
                                       {"first-num", 1},
                                       {"base-time", 1500000000123},
                                       {"first-event", 2000000000},
                                       {"person-proportion", 2},
                                       {"auction-proportion", 5},
                                       {"bid-proportion", 33},
                                       {"hot-auction-ratio", 3},
                                       {"hot-bidders-ratio", 5},
                                       {"hot-sellers-ratio", 2},
                                       {"in-flight-auctions", 37},
                                       {"active-people", 250}}},
                             // A very slow event-time rate: auction expiry ranges beyond 2^32 ms,
                             // times from 1970 to years later, and a sub-generator-style id offset.
                             ParamSet{"slow",
                                      {{"rate", 1},
                                       {"generators", 2000},
                                       {"base-time", 0},
                                       {"first-id", 123456789},
                                       {"first-num", 5}}}),
                         [](const ::testing::TestParamInfo<ParamSet>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace sluice::nexmark
