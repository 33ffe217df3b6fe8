// A test-only library to preload (LD_PRELOAD) into a `crescent` process to
// shift its wall clock, as an NTP step or a VM resume would (clock_skew_test).
// It wraps clock_gettime, which std::chrono::system_clock and gRPC read:
// CLOCK_REALTIME (and its coarse form) reads shifted by the number of
// milliseconds in the file that $CRESCENT_TEST_CLOCK_SHIFT_FILE names, read
// again at most every 10 ms of the monotonic clock, so that a test can step
// the clock of a running process. Every other clock is left alone. No
// allocation and no stdio: it runs inside any caller, signal handlers too.
#include <dlfcn.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>

namespace {

using ClockGettime = int (*)(clockid_t, struct timespec*);

ClockGettime Real() {
  static const ClockGettime real =
      reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime"));
  return real;
}

std::atomic<int64_t> shift_ms{0};
std::atomic<int64_t> next_read_ns{0};

int64_t ReadShiftMs(const char* path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[32] = {};
  const ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return 0;
  return std::strtoll(text, nullptr, 10);
}

int64_t ShiftMs() {
  static const char* const path = std::getenv("CRESCENT_TEST_CLOCK_SHIFT_FILE");
  if (path == nullptr) return 0;
  struct timespec mono;
  if (Real()(CLOCK_MONOTONIC, &mono) != 0) return shift_ms.load();
  const int64_t now_ns = int64_t{mono.tv_sec} * 1'000'000'000 + mono.tv_nsec;
  int64_t next = next_read_ns.load();
  if (now_ns >= next && next_read_ns.compare_exchange_strong(next, now_ns + 10'000'000)) {
    shift_ms.store(ReadShiftMs(path));
  }
  return shift_ms.load();
}

}  // namespace

extern "C" int clock_gettime(clockid_t id, struct timespec* ts) {
  const int r = Real()(id, ts);
  if (r != 0 || (id != CLOCK_REALTIME && id != CLOCK_REALTIME_COARSE)) return r;
  int64_t ns = int64_t{ts->tv_sec} * 1'000'000'000 + ts->tv_nsec + ShiftMs() * 1'000'000;
  ts->tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  ts->tv_nsec = static_cast<long>(ns % 1'000'000'000);
  return r;
}
