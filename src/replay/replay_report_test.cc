#include "replay/replay_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace crescent::replay {
namespace {

ReplayReport Sample() {
  ReplayReport r;
  r.trace = "t.jsonl";
  r.cluster = "embedded";
  r.page_size = 4096;
  r.requests = 10;
  r.page_refs = 100;
  r.hit_pages = 25;
  r.prefix_pages_got = 24;
  r.beyond_pages_read = 3;
  r.pages_put = 70;
  r.errors["NO_SPACE"] = 2;
  r.seconds = 2;
  return r;
}

TEST(ReplayReport, DerivedFigures) {
  ReplayReport r = Sample();
  EXPECT_DOUBLE_EQ(r.hit_ratio(), 0.25);
  EXPECT_DOUBLE_EQ(r.loaded_hit_ratio(), 0.24);
  EXPECT_EQ(r.bytes_got(), 27u * 4096);
  EXPECT_EQ(r.bytes_put(), 70u * 4096);
  EXPECT_EQ(r.error_count(), 2u);
  EXPECT_DOUBLE_EQ(ReplayReport{}.hit_ratio(), 0.0);
}

TEST(ReplayReport, JsonCarriesEveryField) {
  auto j = nlohmann::json::parse(FormatReplayJson(Sample()));
  EXPECT_DOUBLE_EQ(j["hit_ratio"].get<double>(), 0.25);
  EXPECT_EQ(j["pages_got"].get<uint64_t>(), 27u);
  EXPECT_EQ(j["bytes_put"].get<uint64_t>(), 70u * 4096);
  EXPECT_EQ(j["errors"]["NO_SPACE"].get<uint64_t>(), 2u);
  EXPECT_DOUBLE_EQ(j["requests_per_s"].get<double>(), 5.0);
  for (const char* p : {"lookup", "get", "touch", "put"}) {
    ASSERT_TRUE(j["phases"].contains(p)) << p;
    EXPECT_TRUE(j["phases"][p]["latency_us"].contains("p99"));
  }
}

TEST(ReplayReport, TableNamesErrorsByCode) {
  std::string t = FormatReplayTable(Sample());
  EXPECT_NE(t.find("hit ratio    0.2500"), std::string::npos) << t;
  EXPECT_NE(t.find("NO_SPACE 2"), std::string::npos) << t;
  ReplayReport clean = Sample();
  clean.errors.clear();
  EXPECT_NE(FormatReplayTable(clean).find("errors       none"), std::string::npos);
}

}  // namespace
}  // namespace crescent::replay
