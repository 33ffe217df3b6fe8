#include "auth/token_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "auth/auth_file_io.h"
#include "auth/token.h"

namespace crescent::auth {
namespace {

using testing::HasSubstr;
using testing::Not;
namespace fs = std::filesystem;

class TokenFileTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() / ("crescent_token_file_" + std::to_string(::getpid()) + "_" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "token").string();
    ::unsetenv(kTokenEnv);
  }
  void TearDown() override {
    ::unsetenv(kTokenEnv);
    fs::remove_all(dir_);
  }

  void Write(const std::string& text, mode_t mode) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << text;
    ASSERT_EQ(::chmod(path_.c_str(), mode), 0);
  }

  fs::path dir_;
  std::string path_;
  const std::string token_ = FormatToken(NewToken("app"));
};

TEST_F(TokenFileTest, ReadsTheFileElseTheEnvironmentElseNone) {
  StatusOr<std::string> none = LoadClientToken("");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, "");
  Write(token_ + "\n", 0600);
  StatusOr<std::string> got = LoadClientToken(path_);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, token_);
  const std::string other = FormatToken(NewToken("other"));
  ASSERT_EQ(::setenv(kTokenEnv, other.c_str(), 1), 0);
  EXPECT_EQ(*LoadClientToken(""), other);
  EXPECT_EQ(*LoadClientToken(path_), token_);  // the flag wins
}

TEST_F(TokenFileTest, AnExposedOrMissingFileIsRefused) {
  Write(token_ + "\n", 0640);
  StatusOr<std::string> got = LoadClientToken(path_);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("token file '" + path_ + "' has mode 0640"));
  EXPECT_THAT(got.status().message(), HasSubstr("chmod 600"));
  got = LoadClientToken((dir_ / "missing").string());
  EXPECT_EQ(got.status().code(), ErrorCode::kIoError);
  EXPECT_THAT(got.status().message(), HasSubstr("cannot open token file"));
}

TEST_F(TokenFileTest, TextThatIsNoTokenIsRefusedWithoutEchoingIt) {
  Write("app:" + std::string(63, 'a') + "Z\n", 0600);
  StatusOr<std::string> got = LoadClientToken(path_);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), ErrorCode::kUnauthenticated);
  EXPECT_THAT(got.status().message(), HasSubstr("token file '" + path_ + "'"));
  EXPECT_THAT(got.status().message(), Not(HasSubstr("aaaaZ")));
  ASSERT_EQ(::setenv(kTokenEnv, "secret-typo", 1), 0);
  got = LoadClientToken("");
  EXPECT_EQ(got.status().code(), ErrorCode::kUnauthenticated);
  EXPECT_THAT(got.status().message(), HasSubstr("$CRESCENT_TOKEN"));
  EXPECT_THAT(got.status().message(), Not(HasSubstr("secret-typo")));
}

// The credentials of `crescent serve`: the file's tokens plus its own node
// token, in memory only.
TEST_F(TokenFileTest, ServerCredentialsAddTheInternalNodeTokenInMemoryOnly) {
  const std::string auth_path = (dir_ / "auth").string();
  ASSERT_TRUE(
      UpdateAuthFile(auth_path, true, [](AuthFile& f) {
        return f.AddUser("app", {Role::kClient, "", MakeVerifier(RandomKey(), RandomKey())});
      }).ok());
  const std::string before = [&] {
    std::ifstream in(auth_path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  const InternalUser internal = InternalNodeUser(NewToken("serve-node-1"));
  auto creds = LoadServerCredentials(auth_path, &internal, RandomKey());
  ASSERT_TRUE(creds.ok()) << creds.status().ToString();
  const UserEntry* e = (*creds)->file().FindUser("serve-node-1");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->role, Role::kNode);
  EXPECT_NE((*creds)->file().FindUser("app"), nullptr);
  std::ifstream in(auth_path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), before);
  // A reload keeps its verifier, so that its open connections stay valid.
  auto reloaded = LoadServerCredentials(auth_path, &internal, RandomKey());
  ASSERT_TRUE(reloaded.ok());
  EXPECT_TRUE(Equal((*reloaded)->file().FindUser("serve-node-1")->verifier.stored_key,
                    e->verifier.stored_key));
  // A file that already names it is refused rather than shadowed.
  const InternalUser clash = InternalNodeUser(NewToken("app"));
  auto refused = LoadServerCredentials(auth_path, &clash, RandomKey());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("own node token"));
}

}  // namespace
}  // namespace crescent::auth
