// The adaptive policy's timeline as a self-contained SVG (`crescent sim
// --timeline`): one panel per adaptive run of a SimReport, with live block
// references on x and, on y, the prefix hit ratio of each candidate's
// miniature simulation over each window (one polyline per candidate), and
// under it a strip coloured by the candidate the live cache followed then.
#pragma once

#include <string>

#include "sim/report.h"

namespace crescent::sim {

// Runs without a schedule are left out; a report with none gives a panel
// that says so.
std::string RenderTimelineSvg(const SimReport& report);

}  // namespace crescent::sim
