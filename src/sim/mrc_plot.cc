#include "sim/mrc_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "sim/svg_util.h"

namespace crescent::sim {

namespace {

// Canvas and plot-area geometry, in SVG user units.
constexpr double kWidth = 720, kHeight = 420;
constexpr double kLeft = 70, kRight = 540, kTop = 40, kBottom = 360;
constexpr double kLegendX = 560;

}  // namespace

std::string RenderHitRatioSvg(const SimReport& report) {
  using namespace svg;
  uint64_t max_blocks = 1;
  for (const Capacity& c : report.capacities) max_blocks = std::max(max_blocks, c.blocks);
  double max_ratio = 0;
  for (const RunResult& r : report.runs) max_ratio = std::max(max_ratio, r.stats.hit_ratio());

  const double x_step = std::max(1.0, NiceStep(static_cast<double>(max_blocks)));
  const double x_max = NiceMax(static_cast<double>(max_blocks), x_step);
  const double y_step = NiceStep(std::max(max_ratio, 0.1));
  const double y_max = std::min(1.0, NiceMax(std::max(max_ratio, 0.1), y_step));
  auto sx = [&](double blocks) { return kLeft + (kRight - kLeft) * blocks / x_max; };
  auto sy = [&](double ratio) { return kBottom - (kBottom - kTop) * ratio / y_max; };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" viewBox=\"0 0 " << kWidth << " " << kHeight
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << Coord((kLeft + kRight) / 2)
      << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">Prefix hit ratio: "
      << XmlEscape(BaseName(report.trace)) << "</text>\n";

  // Grid lines and tick labels.
  for (double x = 0; x <= x_max + x_step / 2; x += x_step) {
    Line(svg, sx(x), kTop, sx(x), kBottom, "#e0e0e0");
    Text(svg, sx(x), kBottom + 16, "middle", Num(x, Decimals(x_step)));
  }
  for (double y = 0; y <= y_max + y_step / 2; y += y_step) {
    Line(svg, kLeft, sy(y), kRight, sy(y), "#e0e0e0");
    Text(svg, kLeft - 6, sy(y) + 4, "end", Num(y, Decimals(y_step)));
  }

  // Axes and their labels.
  svg << "<path d=\"M" << Coord(kLeft) << " " << Coord(kTop) << " V" << Coord(kBottom) << " H"
      << Coord(kRight) << "\" fill=\"none\" stroke=\"black\"/>\n";
  Text(svg, (kLeft + kRight) / 2, kBottom + 40, "middle",
       "cache capacity (blocks; " + std::to_string(report.distinct_blocks) + " distinct in trace)");
  svg << "<text transform=\"translate(20 " << Coord((kTop + kBottom) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">prefix hit ratio</text>\n";

  // One curve per policy, points in increasing capacity, and its legend entry.
  std::vector<size_t> order(report.capacities.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return report.capacities[a].blocks < report.capacities[b].blocks;
  });
  for (size_t p = 0; p < report.policies.size(); ++p) {
    const std::string color = Color(p);
    const std::string dash =
        report.policies[p] == kBeladyName ? " stroke-dasharray=\"6 4\"" : std::string();
    svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\"" << dash
        << " points=\"";
    for (size_t i = 0; i < order.size(); ++i) {
      const size_t c = order[i];
      svg << (i > 0 ? " " : "") << Coord(sx(static_cast<double>(report.capacities[c].blocks)))
          << "," << Coord(sy(report.At(p, c).stats.hit_ratio()));
    }
    svg << "\"/>\n";
    for (size_t c : order) {
      svg << "<circle cx=\"" << Coord(sx(static_cast<double>(report.capacities[c].blocks)))
          << "\" cy=\"" << Coord(sy(report.At(p, c).stats.hit_ratio())) << "\" r=\"3\" fill=\""
          << color << "\"/>\n";
    }

    const double ly = kTop + 10 + 20.0 * static_cast<double>(p);
    Line(svg, kLegendX, ly, kLegendX + 24, ly, color, " stroke-width=\"2\"" + dash);
    Text(svg, kLegendX + 30, ly + 4, "start", report.policies[p]);
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace crescent::sim
