#include "sim/report.h"

#include <gtest/gtest.h>

#include <sstream>

namespace crescent::sim {
namespace {

// Two policies × two capacities with made-up figures.
SimReport SampleReport() {
  SimReport report;
  report.trace = "traces/t.jsonl";
  report.requests = 10;
  report.block_refs = 200;
  report.distinct_blocks = 80;
  report.policies = {"lru", "belady"};
  report.capacities = {{"5%", 4}, {"16", 16}};
  auto run = [](uint64_t hits, double seconds) {
    RunResult r;
    r.stats = SimStats{.requests = 10, .block_refs = 200, .hit_blocks = hits};
    r.seconds = seconds;
    return r;
  };
  report.runs = {run(20, 0.5), run(50, 0.5), run(60, 1.0), run(90, 0.0)};
  return report;
}

TEST(ReportTest, JsonRunHasEveryField) {
  SimReport report = SampleReport();
  nlohmann::ordered_json j = RunToJson(report, 1, 0);  // belady @ 5%
  EXPECT_EQ(j["trace"], "traces/t.jsonl");
  EXPECT_EQ(j["policy"], "belady");
  EXPECT_EQ(j["capacity"], "5%");
  EXPECT_EQ(j["capacity_blocks"], 4);
  EXPECT_EQ(j["distinct_blocks"], 80);
  EXPECT_EQ(j["requests"], 10);
  EXPECT_EQ(j["block_refs"], 200);
  EXPECT_EQ(j["hit_blocks"], 60);
  EXPECT_DOUBLE_EQ(j["hit_ratio"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(j["seconds"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["refs_per_sec"].get<double>(), 200.0);
  EXPECT_EQ(j["skipped_lines"], 0);
}

TEST(ReportTest, JsonLinesAreOneParseableObjectPerRun) {
  std::istringstream lines(FormatJsonLines(SampleReport()));
  std::vector<std::string> seen;
  std::string line;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << line;
    for (const char* key : {"trace", "policy", "capacity_blocks", "requests", "block_refs",
                            "hit_blocks", "hit_ratio", "seconds", "refs_per_sec"}) {
      EXPECT_TRUE(j.contains(key)) << key << " missing in " << line;
    }
    seen.push_back(j["policy"].get<std::string>() + "@" + j["capacity"].get<std::string>());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"lru@5%", "lru@16", "belady@5%", "belady@16"}));
}

TEST(ReportTest, ZeroSecondsMeansNoRate) {
  SimReport report = SampleReport();
  EXPECT_DOUBLE_EQ(RunToJson(report, 1, 1)["refs_per_sec"].get<double>(), 0.0);
}

TEST(ReportTest, TableHasARowPerPolicyAndAColumnPerCapacity) {
  const std::string table = FormatTable(SampleReport());
  EXPECT_NE(table.find("traces/t.jsonl: 10 requests, 200 block refs, 80 distinct blocks"),
            std::string::npos)
      << table;
  std::istringstream lines(table);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("policy", 0) == 0) {
      EXPECT_NE(line.find("5%"), std::string::npos);
      EXPECT_NE(line.find("16"), std::string::npos);
      EXPECT_NE(line.find("refs/s"), std::string::npos);
    }
    if (line.rfind("lru ", 0) == 0) {
      ++rows;
      EXPECT_NE(line.find("0.1000"), std::string::npos) << line;
      EXPECT_NE(line.find("0.2500"), std::string::npos) << line;
      EXPECT_NE(line.find("400"), std::string::npos) << line;  // 400 refs in 1 s
    }
    if (line.rfind("belady ", 0) == 0) {
      ++rows;
      EXPECT_NE(line.find("0.3000"), std::string::npos) << line;
      EXPECT_NE(line.find("0.4500"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(rows, 2);
  EXPECT_NE(table.find("(4)"), std::string::npos);  // capacity in blocks
}

TEST(ReportTest, TableMentionsSkippedLines) {
  SimReport report = SampleReport();
  report.skipped_lines = 3;
  EXPECT_NE(FormatTable(report).find("3 malformed lines skipped"), std::string::npos);
}

// An adaptive run says what it followed, how often it moved (and did not move
// after a rehearsal) and its sampling.
TEST(ReportTest, AdaptiveRunsReportTheirSchedule) {
  SimReport report = SampleReport();
  report.policies[1] = "adaptive";
  report.runs[2].schedule = ScheduleTrace{.labels = {"learned", "lru"},
                                          .points = {},
                                          .followed = "lru",
                                          .moves = 1,
                                          .rejected_moves = 0,
                                          .rehearsing = "",
                                          .sample_rate = 0.25};
  nlohmann::ordered_json j = RunToJson(report, 1, 0);
  EXPECT_EQ(j["followed"], "lru");
  EXPECT_EQ(j["moves"], 1);
  EXPECT_DOUBLE_EQ(j["sample_rate"].get<double>(), 0.25);
  EXPECT_FALSE(RunToJson(report, 0, 0).contains("followed"));
  EXPECT_NE(FormatTable(report).find(
                "adaptive @ 5%: followed lru at the end, 1 move, sampling 25.0% of keys"),
            std::string::npos);
  EXPECT_EQ(j["rejected_moves"], 0);
  report.runs[2].schedule->rejected_moves = 2;
  EXPECT_EQ(RunToJson(report, 1, 0)["rejected_moves"], 2);
  EXPECT_NE(FormatTable(report).find("1 move (2 rehearsed and not made), sampling 25.0%"),
            std::string::npos);
  EXPECT_EQ(j["rehearsing"], "");
  report.runs[2].schedule->rehearsing = "learned";
  EXPECT_EQ(RunToJson(report, 1, 0)["rehearsing"], "learned");
  EXPECT_NE(FormatTable(report).find("not made), rehearsing a move to learned, sampling"),
            std::string::npos);
}

}  // namespace
}  // namespace crescent::sim
