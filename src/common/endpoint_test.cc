#include "common/endpoint.h"

#include <gtest/gtest.h>

namespace crescent {
namespace {

TEST(Endpoint, RoundTripsEveryOption) {
  Endpoint ep{"10.0.0.7", 9100, "crescent-42-ab", 0xdeadbeefcafe0001};
  std::string text = ep.ToString();
  EXPECT_EQ(text, "10.0.0.7:9100;shm=crescent-42-ab;epoch=deadbeefcafe0001");
  StatusOr<Endpoint> back = ParseEndpoint(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->host, "10.0.0.7");
  EXPECT_EQ(back->port, 9100);
  EXPECT_EQ(back->shm_name, "crescent-42-ab");
  EXPECT_EQ(back->epoch, 0xdeadbeefcafe0001u);
}

TEST(Endpoint, OptionsInAnyOrderAndEachOptional) {
  StatusOr<Endpoint> a = ParseEndpoint("h:1;epoch=ff;shm=s");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->epoch, 0xffu);
  EXPECT_EQ(a->shm_name, "s");
  StatusOr<Endpoint> b = ParseEndpoint("[::1]:2");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->epoch, 0u);
  EXPECT_TRUE(b->shm_name.empty());
  EXPECT_EQ(Endpoint({"h", 3, "", 0}).ToString(), "h:3");
}

// An IPv6 host is written in brackets, so its last group never reads as the
// port, and reads back without them.
TEST(Endpoint, AnIpv6HostIsBracketed) {
  Endpoint ep{"::1", 9100, "s", 0};
  EXPECT_EQ(ep.ToString(), "[::1]:9100;shm=s");
  StatusOr<Endpoint> back = ParseEndpoint(ep.ToString());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->host, "::1");
  EXPECT_EQ(back->port, 9100);
  EXPECT_EQ(HostPort("fe80::1%eth0", 1), "[fe80::1%eth0]:1");
  EXPECT_EQ(HostPort("[::1]", 2), "[::1]:2");
  EXPECT_EQ(HostPort("10.0.0.7", 3), "10.0.0.7:3");
  EXPECT_EQ(HostPort("localhost", 4), "localhost:4");
}

TEST(Endpoint, RefusesMalformedOptions) {
  for (const char* text : {"h:1;", "h:1;shm=", "h:1;epoch=", "h:1;epoch=0", "h:1;epoch=xyz",
                           "h:1;epoch=1ffffffffffffffff", "h:1;shm=a;shm=b", "h:1;epoch=1;epoch=2",
                           "h:1;other=1", "h:0", "h", ":5", "h:1;shm=a;"}) {
    StatusOr<Endpoint> ep = ParseEndpoint(text);
    EXPECT_FALSE(ep.ok()) << text;
    if (!ep.ok()) {
      EXPECT_EQ(ep.status().code(), ErrorCode::kInvalidArgument) << text;
    }
  }
}

}  // namespace
}  // namespace crescent
