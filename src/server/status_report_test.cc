// StatusReport: /api/status reflects the engine and the RPC metrics, keeps a
// bounded history, and survives names that are not UTF-8.
#include "server/status_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace crescent::server {
namespace {

using nlohmann::json;

class StatusReportTest : public testing::Test {
 protected:
  void SetUp() override {
    auto m = master::MasterService::Create(master::MasterConfig{});
    ASSERT_TRUE(m.ok());
    master_ = std::move(m.value());
  }
  void Mount(const std::string& name) {
    master::SegmentSpec spec{name, 1 << 20, "node-a", "127.0.0.1:9", master::Tier::kDram};
    ASSERT_TRUE(master_->MountSegment(spec).ok());
  }
  std::unique_ptr<master::MasterService> master_;
  rpc::RpcServerMetrics rpc_;
};

TEST_F(StatusReportTest, SummarySegmentsRpcAndErrors) {
  Mount("seg-a");
  auto put = master_->PutStart("k", 100, {});
  ASSERT_TRUE(put.ok());
  ASSERT_TRUE(master_->PutEnd("k", put->token).ok());
  ASSERT_TRUE(master_->GetReplicaList("k").ok());
  EXPECT_FALSE(master_->GetReplicaList("absent").ok());
  rpc_.RecordLatency(rpc::RpcMethod::kGetReplicaList, 2000);
  rpc_.RecordLatency(rpc::RpcMethod::kGetReplicaList, 4000);
  rpc_.RecordError(rpc::RpcMethod::kGetReplicaList, ErrorCode::kObjectNotFound);

  StatusReport report(*master_, rpc_, "127.0.0.1:50051");
  json s = json::parse(report.Json(1000));
  EXPECT_EQ(s["master"]["address"], "127.0.0.1:50051");
  EXPECT_EQ(s["summary"]["objects"], 1);
  EXPECT_EQ(s["summary"]["exact_hits"], 1);
  EXPECT_EQ(s["summary"]["exact_misses"], 1);
  EXPECT_DOUBLE_EQ(s["summary"]["hit_ratio"].get<double>(), 0.5);
  ASSERT_EQ(s["segments"].size(), 1u);
  EXPECT_EQ(s["segments"][0]["name"], "seg-a");
  EXPECT_EQ(s["segments"][0]["capacity_bytes"], 1 << 20);
  ASSERT_EQ(s["rpc"].size(), 1u);  // only methods that were called
  EXPECT_EQ(s["rpc"][0]["method"], "GetReplicaList");
  EXPECT_EQ(s["rpc"][0]["count"], 2);
  EXPECT_EQ(s["rpc"][0]["errors"], 1);
  EXPECT_LE(s["rpc"][0]["p50_us"].get<double>(), s["rpc"][0]["p99_us"].get<double>());
  ASSERT_EQ(s["errors"].size(), 1u);
  EXPECT_EQ(s["errors"][0]["code"], "OBJECT_NOT_FOUND");
}

TEST_F(StatusReportTest, TenantsEachWithTheirQuotaAndUse) {
  Mount("seg-a");
  master_->SetTenantQuotas({{"t1", 1000}, {"t2", 2000}});
  auto put = master_->PutStart(std::string("\x1dt1\x1dk"), 100, {});
  ASSERT_TRUE(put.ok());
  ASSERT_TRUE(master_->PutEnd(std::string("\x1dt1\x1dk"), put->token).ok());
  StatusReport report(*master_, rpc_, "m");
  json s = json::parse(report.Json(1000));
  ASSERT_EQ(s["tenants"].size(), 2u);
  EXPECT_EQ(s["tenants"][0]["tenant"], "t1");
  EXPECT_EQ(s["tenants"][0]["quota_bytes"], 1000);
  EXPECT_EQ(s["tenants"][0]["bytes"], 100);
  EXPECT_EQ(s["tenants"][0]["objects"], 1);
  EXPECT_EQ(s["tenants"][1]["tenant"], "t2");
  EXPECT_EQ(s["tenants"][1]["bytes"], 0);
}

TEST_F(StatusReportTest, HistoryIsBoundedAndOrdered) {
  StatusReport report(*master_, rpc_, "m");
  for (int64_t t = 0; t < static_cast<int64_t>(StatusReport::kHistoryPoints) + 25; ++t) {
    rpc_.RecordLatency(rpc::RpcMethod::kExists, 1000);
    report.Sample(t * 1000);
  }
  json s = json::parse(report.Json(0));
  const json& h = s["history"];
  ASSERT_EQ(h.size(), StatusReport::kHistoryPoints);
  ASSERT_EQ(s["history_fields"][0], "unix_ms");
  ASSERT_EQ(s["history_fields"][1], "rpcs");
  EXPECT_EQ(h[0][0], 25 * 1000);  // the oldest 25 were dropped
  for (size_t i = 1; i < h.size(); ++i) {
    EXPECT_EQ(h[i][0].get<int64_t>() - h[i - 1][0].get<int64_t>(), 1000);
    EXPECT_EQ(h[i][1].get<int64_t>() - h[i - 1][1].get<int64_t>(), 1);  // one RPC per point
  }
}

TEST_F(StatusReportTest, NamesThatAreNotUtf8DoNotBreakTheReport) {
  Mount(std::string("seg-\xff\xfe", 6));
  StatusReport report(*master_, rpc_, "m");
  std::string text;
  ASSERT_NO_THROW(text = report.Json(0));
  json s = json::parse(text);
  ASSERT_EQ(s["segments"].size(), 1u);
  EXPECT_EQ(s["segments"][0]["name"].get<std::string>().substr(0, 4), "seg-");
}

}  // namespace
}  // namespace crescent::server
