#include "sim/timeline_plot.h"

#include <algorithm>
#include <sstream>

#include "sim/svg_util.h"

namespace crescent::sim {
namespace {

// Panel geometry, in SVG user units; panels are stacked.
constexpr double kWidth = 820, kPanelHeight = 330;
constexpr double kLeft = 70, kRight = 600, kTop = 40, kBottom = 260;
constexpr double kStripTop = 272, kStripHeight = 14;
constexpr double kLegendX = 620;

void RenderPanel(std::ostringstream& svg, double y0, const std::string& title,
                 const ScheduleTrace& s) {
  using namespace svg;
  uint64_t max_refs = 1;
  double max_ratio = 0.1;
  for (const auto& point : s.points) {
    max_refs = std::max(max_refs, point.refs);
    for (float r : point.ratios) max_ratio = std::max(max_ratio, static_cast<double>(r));
  }
  const double x_step = std::max(1.0, NiceStep(static_cast<double>(max_refs)));
  const double x_max = NiceMax(static_cast<double>(max_refs), x_step);
  const double y_step = NiceStep(max_ratio);
  const double y_max = std::min(1.0, NiceMax(max_ratio, y_step));
  auto sx = [&](double refs) { return kLeft + (kRight - kLeft) * refs / x_max; };
  auto sy = [&](double ratio) { return y0 + kBottom - (kBottom - kTop) * ratio / y_max; };

  svg << "<text x=\"" << Coord((kLeft + kRight) / 2) << "\" y=\"" << Coord(y0 + 22)
      << "\" text-anchor=\"middle\" font-size=\"14\">" << XmlEscape(title) << "</text>\n";
  for (double x = 0; x <= x_max + x_step / 2; x += x_step) {
    Line(svg, sx(x), y0 + kTop, sx(x), y0 + kBottom, "#e0e0e0");
    Text(svg, sx(x), y0 + kStripTop + kStripHeight + 14, "middle", Num(x, Decimals(x_step)));
  }
  for (double y = 0; y <= y_max + y_step / 2; y += y_step) {
    Line(svg, kLeft, sy(y), kRight, sy(y), "#e0e0e0");
    Text(svg, kLeft - 6, sy(y) + 4, "end", Num(y, Decimals(y_step)));
  }
  svg << "<path d=\"M" << Coord(kLeft) << " " << Coord(y0 + kTop) << " V" << Coord(y0 + kBottom)
      << " H" << Coord(kRight) << "\" fill=\"none\" stroke=\"black\"/>\n";
  Text(svg, (kLeft + kRight) / 2, y0 + kStripTop + kStripHeight + 30, "middle",
       "block references; strip: the candidate the live cache followed");
  svg << "<text transform=\"translate(20 " << Coord(y0 + (kTop + kBottom) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">window prefix hit ratio</text>\n";

  for (size_t i = 0; i < s.labels.size(); ++i) {
    svg << "<polyline fill=\"none\" stroke=\"" << Color(i) << "\" stroke-width=\"1.5\" points=\"";
    for (size_t k = 0; k < s.points.size(); ++k) {
      const auto& point = s.points[k];
      const double ratio = i < point.ratios.size() ? point.ratios[i] : 0.0;
      svg << (k > 0 ? " " : "") << Coord(sx(static_cast<double>(point.refs))) << ","
          << Coord(sy(ratio));
    }
    svg << "\"/>\n";
    const double ly = y0 + kTop + 4 + 18.0 * static_cast<double>(i);
    Line(svg, kLegendX, ly, kLegendX + 24, ly, Color(i), " stroke-width=\"2\"");
    Text(svg, kLegendX + 30, ly + 4, "start", s.labels[i]);
  }
  // The strip: each window from the previous point's position to its own.
  double from = 0;
  for (const auto& point : s.points) {
    const double to = static_cast<double>(point.refs);
    svg << "<rect x=\"" << Coord(sx(from)) << "\" y=\"" << Coord(y0 + kStripTop) << "\" width=\""
        << Coord(std::max(0.0, sx(to) - sx(from))) << "\" height=\"" << kStripHeight << "\" fill=\""
        << Color(point.followed) << "\"/>\n";
    from = to;
  }
}

}  // namespace

std::string RenderTimelineSvg(const SimReport& report) {
  using namespace svg;
  std::vector<std::pair<std::string, const ScheduleTrace*>> panels;
  for (size_t p = 0; p < report.policies.size(); ++p) {
    for (size_t c = 0; c < report.capacities.size(); ++c) {
      if (const auto& s = report.At(p, c).schedule) {
        panels.emplace_back(report.policies[p] + " @ " + report.capacities[c].label + " (" +
                                std::to_string(report.capacities[c].blocks) +
                                " blocks): " + BaseName(report.trace),
                            &*s);
      }
    }
  }
  const double height = kPanelHeight * static_cast<double>(std::max<size_t>(1, panels.size()));
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << kWidth << " " << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (panels.empty()) Text(svg, kWidth / 2, kPanelHeight / 2, "middle", "no adaptive run");
  for (size_t i = 0; i < panels.size(); ++i) {
    RenderPanel(svg, kPanelHeight * static_cast<double>(i), panels[i].first, *panels[i].second);
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace crescent::sim
