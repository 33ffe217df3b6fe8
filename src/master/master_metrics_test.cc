// The master's exporter: what /metrics and /health of a master engine say
// (MasterRoutes; the HTTP endpoint itself is metrics/admin_http_test).
#include "master/master_metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace crescent::master {
namespace {

// /health says ready only once the master can store: a master with no segment
// (its node not mounted yet, or refused for another secret) is not ready, and
// is not again when its last segment goes.
TEST(MasterMetrics, NotReadyWithoutASegment) {
  MasterConfig config;
  auto master = MasterService::Create(config);
  ASSERT_TRUE(master.ok());
  metrics::AdminRoutes routes = MasterRoutes(*master.value());
  ASSERT_TRUE(routes.not_ready_reason);
  EXPECT_NE(routes.not_ready_reason().find("no segment is mounted"), std::string::npos);

  SegmentSpec spec{"seg-a", 1 << 20, "node-a", "127.0.0.1:9", Tier::kDram};
  ASSERT_TRUE(master.value()->MountSegment(spec).ok());
  EXPECT_EQ(routes.not_ready_reason(), "");

  ASSERT_TRUE(master.value()->UnmountSegment("seg-a", "node-a").ok());
  EXPECT_NE(routes.not_ready_reason(), "");
}

TEST(MasterMetrics, MetricsCountTheEnginesWork) {
  MasterConfig config;
  auto master = MasterService::Create(config);
  ASSERT_TRUE(master.ok());
  SegmentSpec spec{"seg-a", 1 << 20, "node-a", "127.0.0.1:9", Tier::kDram};
  ASSERT_TRUE(master.value()->MountSegment(spec).ok());
  auto put = master.value()->PutStart("k1", 100, {});
  ASSERT_TRUE(put.ok());
  ASSERT_TRUE(master.value()->PutEnd("k1", put->token).ok());
  ASSERT_TRUE(master.value()->Exists("k1").ok());

  metrics::AdminRoutes routes = MasterRoutes(*master.value());
  ASSERT_TRUE(routes.metrics);
  const std::string body = routes.metrics();
  EXPECT_NE(body.find("# TYPE crescent_requests_total counter"), std::string::npos);
  EXPECT_NE(body.find("crescent_requests_total{op=\"put_start\"} 1\n"), std::string::npos);
  EXPECT_NE(body.find("crescent_exact_lookups_total{result=\"hit\"} 1\n"), std::string::npos);
  EXPECT_NE(body.find("crescent_objects 1\n"), std::string::npos);
  EXPECT_NE(body.find("crescent_segment_capacity_bytes{segment=\"seg-a\"} 1048576\n"),
            std::string::npos);
  EXPECT_NE(body.find("crescent_prefix_length_bucket{le=\"+Inf\"}"), std::string::npos);
  // Every sample line belongs to a family announced by a # TYPE line before it.
  EXPECT_LT(body.find("# TYPE crescent_objects gauge"), body.find("crescent_objects 1"));
}

}  // namespace
}  // namespace crescent::master
