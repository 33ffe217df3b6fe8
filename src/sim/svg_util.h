// Small helpers for the simulator's hand-written SVG plots (mrc_plot.cc,
// timeline_plot.cc): number formatting, escaping, axis steps, and one-line
// writers for the few elements they use.
#pragma once

#include <sstream>
#include <string>

namespace crescent::sim::svg {

// A palette of 12 distinguishable colours, cycled by index.
const char* Color(size_t i);

std::string Num(double v, int decimals);
// Coordinates are written with one decimal.
std::string Coord(double v);
std::string XmlEscape(const std::string& s);
std::string BaseName(const std::string& path);

// A step of 1, 2 or 5 × 10^k that cuts `range` into about five ticks.
double NiceStep(double range);
// Rounds `max` up to a whole number of steps (with a little slack for
// floating-point noise such as 0.6 / 0.2 = 2.9999...).
double NiceMax(double max, double step);
// Decimals that print every multiple of `step` exactly.
int Decimals(double step);

void Line(std::ostringstream& out, double x1, double y1, double x2, double y2,
          const std::string& stroke, const std::string& extra = "");
void Text(std::ostringstream& out, double x, double y, const std::string& anchor,
          const std::string& text);

}  // namespace crescent::sim::svg
