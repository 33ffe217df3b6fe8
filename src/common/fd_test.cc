// File descriptors (common/fd.h): ScopedFd closes what it owns exactly once
// and hands it over on a move or release; WriteAll writes everything through
// short writes and signals; IoError names what failed and why.
#include "common/fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <thread>

namespace crescent {
namespace {

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

int OpenNull() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

TEST(ScopedFdTest, ClosesWhatItOwnsWhenItGoes) {
  int raw = -1;
  {
    ScopedFd fd(OpenNull());
    raw = fd.get();
    ASSERT_TRUE(fd.valid());
    EXPECT_TRUE(IsOpen(raw));
  }
  EXPECT_FALSE(IsOpen(raw));
  ScopedFd none;
  EXPECT_FALSE(none.valid());
  EXPECT_EQ(none.Close(), 0);
}

TEST(ScopedFdTest, AMoveHandsItOverAndReleaseGivesItUp) {
  ScopedFd a(OpenNull());
  const int raw = a.get();
  ScopedFd b(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  EXPECT_EQ(b.get(), raw);
  ScopedFd c;
  c = std::move(b);
  EXPECT_EQ(c.get(), raw);
  EXPECT_TRUE(IsOpen(raw));
  const int released = c.release();
  EXPECT_EQ(released, raw);
  EXPECT_FALSE(c.valid());
  EXPECT_TRUE(IsOpen(raw)) << "release closes nothing";
  ::close(released);
}

TEST(ScopedFdTest, ResetAndCloseCloseTheOldOne) {
  ScopedFd fd(OpenNull());
  const int first = fd.get();
  fd.reset(OpenNull());
  EXPECT_FALSE(IsOpen(first));
  const int second = fd.get();
  EXPECT_TRUE(IsOpen(second));
  EXPECT_EQ(fd.Close(), 0);
  EXPECT_FALSE(fd.valid());
  EXPECT_FALSE(IsOpen(second));
}

TEST(WriteAllTest, WritesEverythingThroughAPipeItOverfills) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  ScopedFd reader(fds[0]), writer(fds[1]);
  std::string data(4 << 20, '\0');  // far past the pipe's 64 KiB: writes come back short
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 + (i >> 16));
  std::string got;
  std::thread drain([&] {
    char buf[1 << 16];
    for (ssize_t n; (n = ::read(reader.get(), buf, sizeof buf)) > 0;) got.append(buf, size_t(n));
  });
  EXPECT_TRUE(WriteAll(writer.get(), data));
  writer.reset();
  drain.join();
  EXPECT_TRUE(got == data);
}

// A signal that interrupts a blocked write (no SA_RESTART) makes write(2)
// return EINTR or a short count: WriteAll carries on either way.
TEST(WriteAllTest, SignalsDuringAWriteLoseNothing) {
  struct sigaction sa {
  }, old{};
  sa.sa_handler = [](int) {};
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(::sigaction(SIGUSR1, &sa, &old), 0);
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  ScopedFd reader(fds[0]), writer(fds[1]);
  const std::string data(1 << 20, 'z');
  std::atomic<bool> result{false};
  std::thread write_thread([&] { result = WriteAll(writer.get(), data); });
  // The writer blocks once the pipe is full; interrupt it several times there.
  for (int i = 0; i < 20; ++i) {
    ::pthread_kill(write_thread.native_handle(), SIGUSR1);
    ::usleep(1000);
  }
  std::string got;
  char buf[1 << 16];
  while (got.size() < data.size()) {
    const ssize_t n = ::read(reader.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    ASSERT_GT(n, 0);
    got.append(buf, size_t(n));
  }
  write_thread.join();
  ::sigaction(SIGUSR1, &old, nullptr);
  EXPECT_TRUE(result.load());
  EXPECT_TRUE(got == data);
}

TEST(WriteAllTest, AFailedWriteReportsItsErrno) {
  ScopedFd read_only(OpenNull());
  errno = 0;
  EXPECT_FALSE(WriteAll(read_only.get(), "x"));
  EXPECT_EQ(errno, EBADF);
  EXPECT_TRUE(WriteAll(read_only.get(), "")) << "nothing to write, nothing written";
}

TEST(IoErrorTest, NamesWhatFailedAndWhy) {
  const Status plain = IoError("cannot read stdin", ENOENT);
  EXPECT_EQ(plain.code(), ErrorCode::kIoError);
  EXPECT_EQ(plain.message(), "cannot read stdin: No such file or directory");
  const Status with_path = IoError("cannot sync log file", "/d/log-1.crlog", EIO);
  EXPECT_EQ(with_path.code(), ErrorCode::kIoError);
  EXPECT_EQ(with_path.message(), "cannot sync log file '/d/log-1.crlog': Input/output error");
}

TEST(SyncDirTest, SyncsADirectoryAndNamesOneItCannotOpen) {
  EXPECT_TRUE(SyncDir("/tmp").ok());
  const Status missing = SyncDir("/nonexistent-crescent-dir");
  EXPECT_EQ(missing.code(), ErrorCode::kIoError);
  EXPECT_EQ(missing.message(),
            "cannot open directory '/nonexistent-crescent-dir': No such file or directory");
}

}  // namespace
}  // namespace crescent
