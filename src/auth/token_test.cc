#include "auth/token.h"

#include <gtest/gtest.h>

#include <set>

namespace crescent::auth {
namespace {

TEST(TokenTest, NewTokensAreDistinctAndRoundTrip) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    const Token t = NewToken("alice");
    const std::string text = FormatToken(t);
    ASSERT_EQ(text.size(), 6 + 64u);
    EXPECT_EQ(text.substr(0, 6), "alice:");
    EXPECT_TRUE(seen.insert(text).second) << "a token repeated";
    StatusOr<Token> back = ParseToken(text + "\n");  // as read from a file
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->name, "alice");
    EXPECT_EQ(back->secret, t.secret);
  }
}

TEST(TokenTest, MalformedTokensAreRefusedWithoutEchoingTheSecret) {
  const std::string secret(64, 'a');
  for (const std::string& bad :
       {std::string(""), std::string("alice"), "alice" + secret, ":" + secret,
        "alice:" + secret.substr(1), "alice:" + secret + "a", "alice:" + std::string(64, 'A'),
        "alice:" + std::string(63, 'a') + "g", "al ice:" + secret, "-a:" + secret}) {
    StatusOr<Token> t = ParseToken(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.status().code(), ErrorCode::kUnauthenticated) << bad;
    EXPECT_EQ(t.status().message().find(secret.substr(0, 16)), std::string::npos)
        << t.status().message();
  }
}

TEST(TokenTest, NamesFollowTheRules) {
  for (const char* ok : {"a", "node-1", "t1.prod_A", "9lives"}) {
    EXPECT_TRUE(CheckName("tenant", ok).ok()) << ok;
  }
  EXPECT_TRUE(CheckName("tenant", std::string(kMaxNameBytes, 'x')).ok());
  for (const std::string& bad : {std::string(""), std::string("-"), std::string(".x"),
                                 std::string("a b"), std::string("a:b"), std::string("a#"),
                                 std::string("caf\xc3\xa9"), std::string(kMaxNameBytes + 1, 'x')}) {
    Status s = CheckName("tenant", bad);
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_EQ(s.message().rfind("tenant", 0), 0u) << s.message();
  }
}

TEST(TokenTest, HexRoundTripsAndRefusesUppercase) {
  Key k{};
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(i * 37);
  Key back{};
  ASSERT_TRUE(FromHex(ToHex(View(k)), &back));
  EXPECT_EQ(back, k);
  std::string upper = ToHex(View(k));
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_FALSE(FromHex(upper, &back));
}

}  // namespace
}  // namespace crescent::auth
