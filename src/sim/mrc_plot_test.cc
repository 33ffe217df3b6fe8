#include "sim/mrc_plot.h"

#include <gtest/gtest.h>

namespace crescent::sim {
namespace {

size_t CountOf(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

SimReport Report(std::vector<std::string> policies, std::vector<Capacity> capacities) {
  SimReport report;
  report.trace = "dir/a<b>&c.jsonl";
  report.distinct_blocks = 1000;
  report.policies = std::move(policies);
  report.capacities = std::move(capacities);
  for (size_t p = 0; p < report.policies.size(); ++p) {
    for (size_t c = 0; c < report.capacities.size(); ++c) {
      RunResult r;
      r.stats.block_refs = 100;
      r.stats.hit_blocks = 10 * (p + 1) + c;
      report.runs.push_back(r);
    }
  }
  return report;
}

TEST(MrcPlotTest, OnePolylinePerPolicyWithAPointPerCapacity) {
  SimReport report = Report({"fifo", "lru", "belady"}, {{"10%", 100}, {"5%", 50}, {"300", 300}});
  const std::string svg = RenderHitRatioSvg(report);
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(CountOf(svg, "<polyline"), 3u);
  EXPECT_EQ(CountOf(svg, "<circle"), 9u);
  for (const char* name : {">fifo<", ">lru<", ">belady<"}) {
    EXPECT_NE(svg.find(name), std::string::npos) << name;  // legend
  }
  EXPECT_NE(svg.find("prefix hit ratio"), std::string::npos);
  EXPECT_NE(svg.find("cache capacity (blocks"), std::string::npos);
}

TEST(MrcPlotTest, PointsGoLeftToRight) {
  SimReport report = Report({"lru"}, {{"10%", 100}, {"5%", 50}, {"300", 300}});
  const std::string svg = RenderHitRatioSvg(report);
  const size_t start = svg.find("points=\"") + 8;
  const std::string points = svg.substr(start, svg.find('"', start) - start);
  std::vector<double> xs;
  for (size_t pos = 0; pos < points.size();) {
    xs.push_back(std::stod(points.substr(pos)));
    pos = points.find(' ', pos);
    if (pos == std::string::npos) break;
    ++pos;
  }
  ASSERT_EQ(xs.size(), 3u);
  EXPECT_LT(xs[0], xs[1]);
  EXPECT_LT(xs[1], xs[2]);
}

TEST(MrcPlotTest, EscapesText) {
  const std::string svg = RenderHitRatioSvg(Report({"lru"}, {{"5%", 50}}));
  EXPECT_NE(svg.find("a&lt;b&gt;&amp;c.jsonl"), std::string::npos);
  EXPECT_EQ(svg.find("a<b>"), std::string::npos);
}

}  // namespace
}  // namespace crescent::sim
