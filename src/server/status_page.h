// The status page served at GET / on the master's admin port: one HTML file
// with its styles and script inline (the hosts that run Crescent often have
// no internet, so it loads nothing else). It polls /api/status once a second
// (status_report.h) and draws the summary, the segments with fill bars, the
// operation rate and hit ratio over the kept history as inline SVG, the RPC
// latencies and the errors. Elements a test reads carry ids and data-value
// attributes with the raw numbers (tests/integration/status_page_test.py).
#pragma once

#include <string_view>

namespace crescent::server {

extern const std::string_view kStatusPageHtml;

}  // namespace crescent::server
