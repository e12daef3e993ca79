// The live monitoring page served at "/" (docs/operations.md, "The live page"): one
// self-contained HTML document with its CSS and a small charting script (inline SVG), no
// external resources, so it works offline. The script polls /api/v1/queries and
// /api/v1/queries/<id>/progress every second and redraws each query's section.
//
// DOM contract (tests and scripts rely on it): each query is a <section class="query"
// data-query-id=ID data-status=STATUS data-falling-behind="true|false">; each chart is a
// <figure class="chart" data-chart=KEY data-points=N> where KEY is one of rates, duration,
// state-rows, state-memory, event-time, backlog, dropped, and N the number of batches it draws
// (0 when it has no data). <body data-polls=N> counts successful polls.
//
// Thread safety: returns a constant.
#pragma once

#include <string_view>

namespace sluice::server {

std::string_view IndexHtml();

}  // namespace sluice::server
