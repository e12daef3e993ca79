// SLUICE_TEST_FAIL_AT: a test-only injected *error* at a micro-batch crash point (docs/testing.md
// "Injected failures").
//
// Unlike SLUICE_CRASH_AT (fs/crash_point.h), which kills the process, this makes the batch that
// reaches the point return an error, as a transient storage failure would, and leaves the process
// running: the query ends with that error and a supervisor (`sluice run --max-restarts`) can
// restart it from its checkpoint.
//
//   SLUICE_TEST_FAIL_AT=<point>      the first batch in this process reaching <point> fails;
//   SLUICE_TEST_FAIL_AT=<point>:<n>  the first n batches reaching it fail (n >= 1).
//
// <point> is one of the micro-batch crash points (stream/micro_batch_execution.h:
// after_offsets_write, after_state_commit, after_sink_write, after_commit_write). The error is
// IOError "injected failure at <point> (SLUICE_TEST_FAIL_AT, k of n)". The count is per process
// and shared by every query of the process. Unset, empty or malformed (a warning is logged once):
// nothing happens. Never set it outside tests.
//
// Thread safety: MaybeFail may be called from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::stream {

inline constexpr char kFailAtEnvVar[] = "SLUICE_TEST_FAIL_AT";

struct FailPointSpec {
  std::string point;
  int64_t times = 1;
};

// Parses "<point>" or "<point>:<n>" (n >= 1); nullopt when malformed.
std::optional<FailPointSpec> ParseFailPointSpec(std::string_view text);

// The injected error when SLUICE_TEST_FAIL_AT arms `point` and its count is not used up;
// otherwise OK.
Status MaybeFail(std::string_view point);

// Forgets how many failures were injected (tests that change the variable).
void ResetFailPointCountForTesting();

}  // namespace sluice::stream
