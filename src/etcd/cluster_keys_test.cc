#include "etcd/cluster_keys.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace crescent::etcd {
namespace {

using ::testing::HasSubstr;

TEST(ClusterKeysTest, LogKeysSortByPositionAndReadBack) {
  EXPECT_EQ(LeaderKey("c1"), "/crescent/c1/leader");
  EXPECT_EQ(LogKey("c1", 0x2a), "/crescent/c1/log/000000000000002a");
  EXPECT_LT(LogKey("c1", 0xff), LogKey("c1", 0x100));  // etcd ranges in byte order
  EXPECT_EQ(*LogKeyPosition("c1", LogKey("c1", ~uint64_t{0})), ~uint64_t{0});
  EXPECT_FALSE(LogKeyPosition("c1", LogKey("c2", 1)).ok());
  EXPECT_FALSE(LogKeyPosition("c1", "/crescent/c1/log/00000000000000zz").ok());
  EXPECT_FALSE(LogKeyPosition("c1", "/crescent/c1/log/1").ok());
  EXPECT_EQ(MemberKey("c1", "m7"), "/crescent/c1/members/m7");
}

TEST(ClusterKeysTest, LeaderInfoRoundTripsAndAnEmptyValueIsNoLeaderYet) {
  const LeaderInfo info{"a1b2", "10.0.0.1:50051", "10.0.0.1:8080"};
  auto back = DecodeLeaderInfo(EncodeLeaderInfo(info));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->master_id, "a1b2");
  EXPECT_EQ(back->grpc, "10.0.0.1:50051");
  EXPECT_EQ(back->http, "10.0.0.1:8080");
  EXPECT_EQ(DecodeLeaderInfo("").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(DecodeLeaderInfo("master_id=x\n").ok());  // no endpoint
  EXPECT_FALSE(DecodeLeaderInfo("garbage").ok());
}

TEST(ClusterKeysTest, MemberInfoRoundTripsAndRefusesBadNumbers) {
  const MemberInfo info{"m1", "h:1", "", 123456789012ull, 1700000000000ull, true, 98765ull};
  auto back = DecodeMemberInfo(EncodeMemberInfo(info));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->applied_position, 123456789012ull);
  EXPECT_EQ(back->applied_records, 1700000000000ull);
  EXPECT_TRUE(back->keeps_snapshots);
  EXPECT_EQ(back->snapshot_position, 98765ull);
  EXPECT_FALSE(DecodeMemberInfo(EncodeMemberInfo(MemberInfo{.master_id = "m2"}))->keeps_snapshots);
  EXPECT_FALSE(DecodeMemberInfo("master_id=m1\nsnapshot_position=x\n").ok());
  EXPECT_FALSE(DecodeMemberInfo("master_id=m1\napplied_position=12x\n").ok());
}

TEST(ClusterKeysTest, EtcdAddressesParseOrSayWhatIsWrong) {
  EXPECT_TRUE(IsEtcdAddress("etcd://h1:2379/c1"));
  EXPECT_FALSE(IsEtcdAddress("h1:50051"));
  auto a = ParseEtcdAddress("etcd://h1:2379,h2:2380/prod-1");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->cluster, "prod-1");
  EXPECT_EQ(a->endpoints, (std::vector<std::string>{"h1:2379", "h2:2380"}));
  EXPECT_THAT(ParseEtcdAddress("etcd://h1:2379").status().message(), HasSubstr("no cluster"));
  EXPECT_FALSE(ParseEtcdAddress("etcd://h1:2379/").ok());
  EXPECT_FALSE(ParseEtcdAddress("etcd://h1:2379/a b").ok());
  EXPECT_FALSE(ParseEtcdAddress("etcd:///c1").ok());
  EXPECT_FALSE(ParseEtcdAddress("h1:2379/c1").ok());
}

}  // namespace
}  // namespace crescent::etcd
