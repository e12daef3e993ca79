// The Prometheus text exposition format 0.0.4 of the monitoring server's /metrics
// (docs/operations.md lists every metric and its meaning).
//
// Every family is printed once with "# HELP" and "# TYPE" lines, then its samples; every sample
// has the labels query_name (empty when unset) and query_id. Values come from the last batch's
// StreamingQueryProgress (rates rounded to one decimal, as its JSON has them, so a scrape can be
// compared with /api/v1/queries/<id>/progress) or from the store's counters. A value that is
// absent or not finite has no sample. Label values are escaped (\\, \", \n), HELP text too.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/query_store.h"

namespace sluice::server {

inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

std::string FormatPrometheus(const std::vector<QuerySnapshot>& queries);

// A label value with \, " and newline escaped as the format requires.
std::string EscapeLabelValue(std::string_view value);

}  // namespace sluice::server
