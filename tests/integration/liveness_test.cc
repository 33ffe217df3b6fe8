// Liveness with real processes: a store node's heartbeats never wait behind a
// slow call of the master (docs/control-plane.md, "Liveness"). The master runs one
// RPC thread and a short heartbeat TTL; a call that holds that thread for
// several TTLs must not cost a healthy node its segment.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "integration/cluster.h"

namespace crescent::itest {
namespace {

constexpr size_t kMiB = 1 << 20;

// The slow call is a put whose eviction demotes a victim to the persistent
// tier of a node that does not answer (stopped with SIGSTOP): the master waits
// for that copy until its deadline (5 s, five heartbeat TTLs) on its one RPC
// thread. Node A, healthy throughout, must stay mounted: it is never told
// NODE_UNKNOWN, so it never mounts again.
TEST(LivenessTest, AHealthyNodeStaysMountedWhileTheRpcThreadIsBusy) {
  TempDir tmp;
  Cluster cluster({.stores = 1,
                   .segment_size = "8MiB",
                   .heartbeat_ttl_ms = 1000,
                   .heartbeat_interval_ms = 100,
                   .master_flags = {"--rpc-threads", "1"}});
  ASSERT_TRUE(cluster.Start());                                              // A: DRAM
  ASSERT_TRUE(cluster.AddStore({"--pmem", tmp.File("b.pmem") + ":32MiB"}));  // B: DRAM + PMEM
  ClientConfig config = cluster.ClientConfigFor(/*use_shm=*/false);
  config.lean_control = false;  // every call on the master's RPC thread
  config.put_retry_ms = 0;
  StatusOr<std::unique_ptr<Client>> connected = Client::Connect(config);
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  Client& client = **connected;
  ASSERT_TRUE(cluster.WaitForSegments(client, 3, kStartTimeout));

  // Both DRAM segments three-quarters full: below the eviction watermark, and
  // without room for a 3 MiB value.
  for (int i = 0; i < 6; ++i) {
    for (size_t node = 0; node < 2; ++node) {
      PutOptions here;
      here.preferred_segment = cluster.store(node).segment;
      std::string key = node == 0 ? "a/" : "b/";
      key += std::to_string(i);
      Status s = client.Put(key, RandomBytes(kMiB, static_cast<uint32_t>(i)), here);
      ASSERT_TRUE(s.ok()) << key << ": " << s.ToString();
    }
  }

  cluster.store(1).proc->Freeze();
  // Its outcome does not matter (the client gives up after its RPC timeout).
  (void)client.Put("big", RandomBytes(3 * kMiB, 99));
  cluster.store(1).proc->Kill(SIGCONT);

  // A heartbeat answered late would have found A dropped: NODE_UNKNOWN, and A
  // mounts again (and prints so). Give any late answer time to arrive.
  ASSERT_TRUE(cluster.WaitForSegments(client, 3, kStartTimeout));
  EXPECT_EQ(cluster.store(0).proc->Output().find("remounted"), std::string::npos)
      << cluster.store(0).proc->Output();
  // The call did hold the thread past the TTL: the stopped node B, silent
  // for as long, was dropped and had to mount again.
  EXPECT_TRUE(cluster.store(1).proc->WaitForLine("remounted", kStartTimeout))
      << cluster.store(1).proc->Output();
}

}  // namespace
}  // namespace crescent::itest
