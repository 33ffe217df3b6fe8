#include "sim/svg_util.h"

#include <cmath>
#include <cstdio>
#include <iterator>

namespace crescent::sim::svg {

const char* Color(size_t i) {
  static constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                            "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                            "#bcbd22", "#7f7f7f", "#393b79", "#ad494a"};
  return kColors[i % std::size(kColors)];
}

std::string Num(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

std::string Coord(double v) { return Num(v, 1); }

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

double NiceStep(double range) {
  const double raw = range / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
}

double NiceMax(double max, double step) { return std::ceil(max / step - 1e-9) * step; }

int Decimals(double step) { return step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step))); }

void Line(std::ostringstream& out, double x1, double y1, double x2, double y2,
          const std::string& stroke, const std::string& extra) {
  out << "<line x1=\"" << Coord(x1) << "\" y1=\"" << Coord(y1) << "\" x2=\"" << Coord(x2)
      << "\" y2=\"" << Coord(y2) << "\" stroke=\"" << stroke << "\"" << extra << "/>\n";
}

void Text(std::ostringstream& out, double x, double y, const std::string& anchor,
          const std::string& text) {
  out << "<text x=\"" << Coord(x) << "\" y=\"" << Coord(y) << "\" text-anchor=\"" << anchor << "\">"
      << XmlEscape(text) << "</text>\n";
}

}  // namespace crescent::sim::svg
