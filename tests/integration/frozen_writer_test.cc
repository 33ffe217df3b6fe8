// The frozen-writer scenario of the integrity work, as a user would meet it:
// `crescent put keyA` is frozen (SIGSTOP) while its bytes may be in flight, the
// master discards its put at the put timeout, `crescent put keyB` takes the
// space, the frozen writer resumes (SIGCONT), and `crescent get keyB` must give
// keyB's exact bytes or an error, never keyA's. Over TCP (--no-shm) and over
// shared memory, at several freezing points.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include "integration/cluster.h"

namespace crescent::itest {
namespace {

using std::chrono::milliseconds;

std::string RandomText(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint64_t v = rng();
    std::memcpy(out.data() + i, &v, 8);
  }
  return out;
}

class FrozenWriterTest : public WithCluster<testing::TestWithParam<bool>> {};

TEST_P(FrozenWriterTest, AGetNeverReturnsTheFrozenWritersBytes) {
  const bool shm = GetParam();
  ClusterOptions options;
  options.stores = 1;
  options.segment_size = "48MiB";  // room for one 40 MiB value, not two
  options.store_shm = shm;
  options.heartbeat_ttl_ms = 60000;
  options.master_flags = {"--put-timeout-ms", "1500"};
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));
  TempDir& dir = cluster_->dir();
  constexpr size_t kSize = 40 << 20;
  const std::string a = RandomText(kSize, 1), b = RandomText(kSize, 2);
  ASSERT_TRUE(WriteFile(dir.File("a.bin"), a));
  ASSERT_TRUE(WriteFile(dir.File("b.bin"), b));
  const std::string master = cluster_->master_address();
  auto crescent = [&](std::vector<std::string> args) {
    args.insert(args.begin() + 1, {"--master", master, "--timeout-ms", "20000"});
    return RunCrescent(args, dir.path());
  };

  int foreign = 0, served = 0;
  for (int delay_ms : {0, 3, 10, 30, 100}) {
    SCOPED_TRACE("frozen " + std::to_string(delay_ms) + " ms after start");
    const std::string key_a = "keyA-" + std::to_string(delay_ms);
    const std::string key_b = "keyB-" + std::to_string(delay_ms);
    Process writer({CrescentBin(), "put", "--master", master, "--timeout-ms", "20000", key_a,
                    dir.File("a.bin")},
                   dir.File("writer-" + std::to_string(delay_ms) + ".log"));
    ASSERT_TRUE(writer.started());
    std::this_thread::sleep_for(milliseconds(delay_ms));
    writer.Kill(SIGSTOP);

    // keyB gets the space once keyA's put is discarded and its capability is
    // over (NO_SPACE until then), or at once by evicting keyA if keyA's put
    // had already ended.
    CommandResult put_b;
    for (int i = 0; i < 300; ++i) {
      // Hard-pinned: the resumed writer's retry must not simply evict it.
      put_b = crescent({"put", "--hard-pin", key_b, dir.File("b.bin")});
      if (put_b.exit_code == 0) break;
      std::this_thread::sleep_for(milliseconds(100));
    }
    ASSERT_EQ(put_b.exit_code, 0) << put_b.err;

    writer.Kill(SIGCONT);
    ASSERT_TRUE(writer.Wait(milliseconds(30000)).has_value()) << "the resumed writer hung";

    CommandResult got = crescent({"get", key_b, dir.File("out.bin")});
    if (got.exit_code != 0) std::fprintf(stderr, "get failed: %s\n", got.err.c_str());
    if (got.exit_code == 0) {
      ++served;
      if (ReadFileOrEmpty(dir.File("out.bin")) != b) ++foreign;
    }
    // Forced: the get's lease must not keep keyB (its space is held until the
    // lease's end; the next round's put waits for it).
    (void)crescent({"rm", "--force", key_a});
    (void)crescent({"rm", "--force", key_b});
  }
  EXPECT_EQ(foreign, 0) << "a get returned bytes that were not put under its key";
  EXPECT_GT(served, 0) << "no get of keyB succeeded at all";
}

INSTANTIATE_TEST_SUITE_P(Transports, FrozenWriterTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("Shm") : std::string("Tcp");
                         });

}  // namespace
}  // namespace crescent::itest
