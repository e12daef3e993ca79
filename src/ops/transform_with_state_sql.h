// The SQL of transformWithState (ops/transform_with_state.h), built here so that
// transform_with_state.cc holds the control flow only. The operator registers batches under the
// view names below on its own connection, within one batch. Thread safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>

#include "engine/types.h"

namespace sluice::ops {

inline constexpr char kTwsInputView[] = "__sluice_tws_input";
inline constexpr char kTwsRowsView[] = "__sluice_tws_rows";
inline constexpr char kTwsInitialView[] = "__sluice_tws_initial";

// `late_prefix` ("epoch_us(<event time>) <= ") completed with the late watermark in us
// (saturating).
std::string TwsLateConditionSql(const std::string& late_prefix, int64_t late_watermark_ms);
// The number of rows of kTwsInputView that are late.
std::string TwsLateCountSql(const std::string& late_condition);
// The rows of kTwsInputView that are not late (a NULL event time is never late).
std::string TwsNotLateSql(const std::string& late_condition);
// Every column of `view` cast to the type its state values use (custom_state_codec.h).
std::string TwsCastSql(const engine::Schema& schema, const std::string& view);

}  // namespace sluice::ops
