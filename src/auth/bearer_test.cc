// VerifyBearer: a whole token checked against the auth file's verifiers.
#include "auth/bearer.h"

#include <gmock/gmock.h>

#include "auth/token.h"

namespace crescent::auth {
namespace {

class BearerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(file_.SetTenantQuota("t1", 1 << 20).ok());
    app_ = NewToken("app");
    ASSERT_TRUE(
        file_.AddUser("app", {Role::kClient, "t1", MakeVerifier(app_.secret, RandomKey())}).ok());
  }
  AuthFile file_;
  Token app_;
};

TEST_F(BearerTest, AKnownTokenIsItsUser) {
  ServerCredentials creds(file_);
  StatusOr<Identity> id = VerifyBearer(creds, "Bearer " + FormatToken(app_));
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(id->name, "app");
  EXPECT_EQ(id->role, Role::kClient);
  EXPECT_EQ(id->tenant, "t1");
}

TEST_F(BearerTest, AWrongSecretAnUnknownNameAndNoSchemeAreRefused) {
  ServerCredentials creds(file_);
  Token wrong = app_;
  wrong.secret[0] ^= 1;
  for (const Token& t : {wrong, NewToken("ghost")}) {
    StatusOr<Identity> id = VerifyBearer(creds, "Bearer " + FormatToken(t));
    EXPECT_EQ(id.status().code(), ErrorCode::kUnauthenticated) << t.name;
    EXPECT_EQ(id.status().message(), kUnknownTokenMessage);
  }
  StatusOr<Identity> bare = VerifyBearer(creds, FormatToken(app_));
  EXPECT_EQ(bare.status().code(), ErrorCode::kUnauthenticated);
  EXPECT_THAT(bare.status().message(), ::testing::HasSubstr("Bearer"));
  EXPECT_EQ(VerifyBearer(creds, "Bearer nonsense").status().code(), ErrorCode::kUnauthenticated);
  // Revoked: the same token against credentials without it.
  ASSERT_TRUE(file_.RemoveUser("app").ok());
  EXPECT_FALSE(VerifyBearer(ServerCredentials(file_), "Bearer " + FormatToken(app_)).ok());
}

}  // namespace
}  // namespace crescent::auth
