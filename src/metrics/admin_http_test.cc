// The admin endpoint over a real socket: /health, /metrics content, 404.
#include "metrics/admin_http.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include "master/master_service.h"

namespace crescent::metrics {
namespace {

TEST(AdminHttp, ServesHealthAndMetrics) {
  master::MasterConfig config;
  auto master = master::MasterService::Create(config);
  ASSERT_TRUE(master.ok());
  master::SegmentSpec spec{"seg-a", 1 << 20, "node-a", "127.0.0.1:9", master::Tier::kDram};
  ASSERT_TRUE(master.value()->MountSegment(spec).ok());
  auto put = master.value()->PutStart("k1", 100, {});
  ASSERT_TRUE(put.ok());
  ASSERT_TRUE(master.value()->PutEnd("k1", put->token).ok());
  ASSERT_TRUE(master.value()->Exists("k1").ok());

  auto server = AdminHttpServer::Start("127.0.0.1", 0, *master.value());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  httplib::Client http("127.0.0.1", server.value()->port());

  auto health = http.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");

  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  const std::string& body = metrics->body;
  EXPECT_NE(body.find("# TYPE crescent_requests_total counter"), std::string::npos);
  EXPECT_NE(body.find("crescent_requests_total{op=\"put_start\"} 1\n"), std::string::npos);
  EXPECT_NE(body.find("crescent_exact_lookups_total{result=\"hit\"} 1\n"), std::string::npos);
  EXPECT_NE(body.find("crescent_objects 1\n"), std::string::npos);
  EXPECT_NE(body.find("crescent_segment_capacity_bytes{segment=\"seg-a\"} 1048576\n"),
            std::string::npos);
  EXPECT_NE(body.find("crescent_prefix_length_bucket{le=\"+Inf\"}"), std::string::npos);
  // Every sample line belongs to a family announced by a # TYPE line before it.
  EXPECT_LT(body.find("# TYPE crescent_objects gauge"), body.find("crescent_objects 1"));

  auto missing = http.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  server.value()->Stop();
  EXPECT_FALSE(http.Get("/health"));
}

TEST(AdminHttp, BusyPortIsAnError) {
  master::MasterConfig config;
  auto master = master::MasterService::Create(config);
  ASSERT_TRUE(master.ok());
  auto first = AdminHttpServer::Start("127.0.0.1", 0, *master.value());
  ASSERT_TRUE(first.ok());
  auto second = AdminHttpServer::Start("127.0.0.1", first.value()->port(), *master.value());
  EXPECT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace crescent::metrics
