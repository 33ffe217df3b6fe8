// The hit-ratio curve of a SimReport as a small self-contained SVG: capacity
// (blocks) on x, prefix hit ratio on y, one <polyline> per policy (points in
// increasing capacity), with axes, ticks, labels and a legend. Both axes start
// at 0 so curves of different traces or runs can be compared by eye.
#pragma once

#include <string>

#include "sim/report.h"

namespace crescent::sim {

std::string RenderHitRatioSvg(const SimReport& report);

}  // namespace crescent::sim
