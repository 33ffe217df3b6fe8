#include "auth/auth_file_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

namespace crescent::auth {
namespace {

using testing::HasSubstr;
namespace fs = std::filesystem;

class AuthFileIoTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() / ("crescent_auth_io_" + std::to_string(::getpid()) + "_" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "auth").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  void WriteRaw(const std::string& text, mode_t mode) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << text;
    ASSERT_EQ(::chmod(path_.c_str(), mode), 0);
  }

  static Status AddClient(AuthFile& f, const std::string& name) {
    return f.AddUser(name, UserEntry{Role::kClient, "", MakeVerifier(RandomKey(), RandomKey())});
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(AuthFileIoTest, UpdateCreatesAnOwnerOnlyFileThatLoads) {
  ASSERT_TRUE(UpdateAuthFile(path_, /*create=*/true, [](AuthFile& f) {
                return f.SetTenantQuota("t1", 1000);
              }).ok());
  ASSERT_TRUE(UpdateAuthFile(path_, false, [](AuthFile& f) { return AddClient(f, "a"); }).ok());
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_FALSE(fs::exists(path_ + ".tmp"));
  StatusOr<AuthFile> f = LoadAuthFile(path_);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->tenant_quotas.at("t1"), 1000u);
  EXPECT_NE(f->FindUser("a"), nullptr);
}

TEST_F(AuthFileIoTest, AMissingFileIsAnErrorUnlessCreating) {
  StatusOr<AuthFile> f = LoadAuthFile(path_);
  EXPECT_EQ(f.status().code(), ErrorCode::kIoError);
  EXPECT_THAT(f.status().message(),
              HasSubstr("cannot open auth file '" + path_ + "': No such file or directory"));
  Status s = UpdateAuthFile(path_, /*create=*/false, [](AuthFile&) { return Status::Ok(); });
  EXPECT_THAT(s.message(), HasSubstr("No such file or directory"));
  EXPECT_FALSE(fs::exists(path_));
  s = UpdateAuthFile((dir_ / "no" / "such" / "dir").string(), true,
                     [](AuthFile&) { return Status::Ok(); });
  EXPECT_EQ(s.code(), ErrorCode::kIoError);
}

TEST_F(AuthFileIoTest, AFileOthersMayReadOrWriteIsRefused) {
  ASSERT_TRUE(UpdateAuthFile(path_, true, [](AuthFile& f) { return AddClient(f, "a"); }).ok());
  for (mode_t mode : {0644, 0640, 0604, 0620, 0602}) {
    ASSERT_EQ(::chmod(path_.c_str(), mode), 0);
    StatusOr<AuthFile> f = LoadAuthFile(path_);
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(f.status().message(), HasSubstr("refused (chmod 600 " + path_ + ")"));
    Status s = UpdateAuthFile(path_, true, [](AuthFile& f) { return AddClient(f, "b"); });
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << mode;
  }
  StatusOr<AuthFile> f = LoadAuthFile(path_);
  EXPECT_THAT(f.status().message(), HasSubstr("has mode 0602"));
  ASSERT_EQ(::chmod(path_.c_str(), 0400), 0);  // read-only for its owner is fine
  EXPECT_TRUE(LoadAuthFile(path_).ok());
}

TEST_F(AuthFileIoTest, ACorruptFileIsRefusedAndNotOverwritten) {
  const std::string garbage = "crescent-auth-file 1\nuser x\n";
  WriteRaw(garbage, 0600);
  StatusOr<AuthFile> f = LoadAuthFile(path_);
  EXPECT_EQ(f.status().code(), ErrorCode::kCorruptData);
  EXPECT_THAT(f.status().message(),
              HasSubstr("auth file '" + path_ + "' is corrupt: line 2: a user line is"));
  Status s = UpdateAuthFile(path_, true, [](AuthFile& f) { return AddClient(f, "b"); });
  EXPECT_EQ(s.code(), ErrorCode::kCorruptData);
  std::ifstream in(path_);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), garbage);
}

TEST_F(AuthFileIoTest, DirectoriesAndHugeFilesAreRefused) {
  fs::create_directory(path_);
  ::chmod(path_.c_str(), 0700);
  EXPECT_THAT(LoadAuthFile(path_).status().message(), HasSubstr("is not a regular file"));
  fs::remove(path_);
  WriteRaw("", 0600);
  fs::resize_file(path_, kMaxAuthFileBytes + 1);
  EXPECT_THAT(LoadAuthFile(path_).status().message(), HasSubstr("is larger than 16 MiB"));
}

TEST_F(AuthFileIoTest, AFailedEditWritesNothing) {
  ASSERT_TRUE(UpdateAuthFile(path_, true, [](AuthFile& f) { return AddClient(f, "a"); }).ok());
  Status s = UpdateAuthFile(path_, false, [](AuthFile& f) { return AddClient(f, "a"); });
  EXPECT_THAT(s.message(), HasSubstr("already exists"));
  EXPECT_EQ(LoadAuthFile(path_)->users.size(), 1u);
}

TEST_F(AuthFileIoTest, ConcurrentEditsAllLand) {
  std::vector<std::thread> threads;
  std::vector<Status> results(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      results[i] = UpdateAuthFile(
          path_, true, [i](AuthFile& f) { return AddClient(f, "user" + std::to_string(i)); });
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : results) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(LoadAuthFile(path_)->users.size(), 8u);
}

}  // namespace
}  // namespace crescent::auth
