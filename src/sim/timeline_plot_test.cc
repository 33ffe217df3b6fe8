#include "sim/timeline_plot.h"

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

ScheduleTrace Schedule(size_t points) {
  ScheduleTrace s;
  s.labels = {"learned", "lru", "s3fifo-10"};
  for (size_t i = 0; i < points; ++i) {
    s.points.push_back({.refs = 100 * (i + 1),
                        .ratios = {0.1f * static_cast<float>(i % 3), 0.2f, 0.3f},
                        .followed = static_cast<uint32_t>(i < points / 2 ? 0 : 2)});
  }
  return s;
}

SimReport Report() {
  SimReport report;
  report.trace = "dir/a<b>.jsonl";
  report.policies = {"lru", "adaptive"};
  report.capacities = {{"5%", 50}, {"10%", 100}};
  report.runs.resize(4);
  report.runs[2].schedule = Schedule(6);  // adaptive @ 5%
  report.runs[3].schedule = Schedule(4);  // adaptive @ 10%
  return report;
}

TEST(TimelinePlotTest, APanelPerAdaptiveRunAndALinePerCandidate) {
  const std::string svg = RenderTimelineSvg(Report());
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(CountOf(svg, "<polyline"), 2u * 3);  // 2 panels × 3 candidates
  // The strip: one rectangle per timeline point, plus the background.
  EXPECT_EQ(CountOf(svg, "<rect"), 1u + 6 + 4);
  EXPECT_NE(svg.find("adaptive @ 5% (50 blocks): a&lt;b&gt;.jsonl"), std::string::npos);
  EXPECT_NE(svg.find(">s3fifo-10<"), std::string::npos);
}

TEST(TimelinePlotTest, TheStripTakesTheFollowedCandidatesColour) {
  SimReport report = Report();
  report.runs[3].schedule.reset();
  const std::string svg = RenderTimelineSvg(report);
  // Candidates 0 and 2 were followed, 3 windows each; candidate 1 never.
  EXPECT_EQ(CountOf(svg, "fill=\"#1f77b4\""), 3u);  // learned's colour
  EXPECT_EQ(CountOf(svg, "fill=\"#2ca02c\""), 3u);  // s3fifo-10's
  EXPECT_EQ(CountOf(svg, "fill=\"#d62728\""), 0u);  // lru's
}

TEST(TimelinePlotTest, NoAdaptiveRunSaysSo) {
  SimReport report = Report();
  report.runs[2].schedule.reset();
  report.runs[3].schedule.reset();
  EXPECT_NE(RenderTimelineSvg(report).find("no adaptive run"), std::string::npos);
}

}  // namespace
}  // namespace crescent::sim
