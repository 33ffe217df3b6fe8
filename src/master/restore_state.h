// RestoreState: what a restore keeps between its records and its completion
// (docs/durability.md; master_restore*.cc apply and complete it).
//
// Contract:
//  - `active`, the tallies, `chains`, `ended`, `admits` and `scratch` are written
//    while records are applied, before the engine serves anything (by the
//    caller's thread, or one thread per shard for that shard's entries), and
//    read by the completion once FinishRestore has returned; nothing else
//    touches them, so they need no lock.
//  - `regions` is filled by FinishRestore and consumed by
//    RebuildRestoredAllocators under `regions_mu` (a test may run that step
//    on its own thread beside the completion's).
//  - The completion runs once per restore: `completed` is false from the
//    first record until it ends (release/acquire), `done_mu` makes a second
//    caller wait for the first, and `stop` (the engine's destruction) ends it
//    between steps. The thread that runs it in the background is joined on
//    destruction.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cache/eviction_policy.h"
#include "cache/offset_allocator.h"
#include "master/types.h"

namespace crescent::master {

struct RestoreState {
  // What a restored put leaves for the policy: the object to admit (id
  // kNoParent: nothing, e.g. hard-pinned). 16 bytes: a restore keeps one per
  // put until its policy fill, in memory the kernel must zero before the
  // engine serves; the key's hash and the soft-pin end are read from the
  // entry at the fill instead (an entry keeps both).
  struct Put {
    cache::ObjectId id = cache::kNoParent;
    uint64_t bytes : 56 = 0;  // size times replicas: below 2^48
    uint64_t tier : 8 = 0;    // whose policy admits it (a Tier)
  };
  // A shard's restored puts that name a chain parent, in record order: the
  // object and its parent's key (the keys end to end in `keys`).
  struct Chains {
    std::vector<cache::ObjectId> child;
    std::vector<uint64_t> key_end;  // child[i]'s parent key ends at keys[key_end[i]]
    std::string keys;
  };
  // The objects a thread's records created, added to the engine's counts once:
  // two threads adding to one atomic per record would pass its cache line
  // between their cores each time.
  struct Tally {
    uint64_t live = 0;
    uint64_t hard_pinned = 0;
  };
  // One replica of a restored segment: its segment and its allocation.
  struct Region {
    SegmentId segment;
    cache::OffsetAllocator::UsedRegion region;
  };
  // ApplyRestoredBatch's working memory, kept from one batch to the next (a
  // fresh megabyte per batch would fault its pages in every time). Each
  // shard's admissions are written by the thread applying its records, in
  // its own list, and merged into record order after.
  struct BatchScratch {
    std::vector<std::vector<uint32_t>> by_shard;  // record indexes
    std::vector<std::vector<Put>> admit;          // by_shard's admissions
    std::vector<uint64_t> hashes;                 // per record
    std::vector<uint32_t> shard_of;               // per record; kNoShard: a segment's
    std::vector<uint32_t> merged;                 // per shard: admissions merged
  };

  ~RestoreState() {
    stop.store(true, std::memory_order_relaxed);
    if (thread.joinable()) thread.join();
  }

  // From the first record until FinishRestore; while it is set the Bloom
  // filter is left alone (the completion builds it once, for the restored count).
  bool active = false;
  uint64_t records = 0;
  uint64_t skipped = 0;        // records that could not apply
  std::vector<Chains> chains;  // by shard index
  // By shard index: the objects that restored session hints (kSessionEnded)
  // named, in record order, marked after the policy fill (a stale id, of an
  // object replaced or removed later, is ignored then).
  std::vector<std::vector<cache::ObjectId>> ended;
  // Every restored put's admission, in record order, kept until the policy
  // fill (an object replaced or removed later is skipped then): in chunks, a
  // batch's each, so that millions of them are never copied to grow.
  std::vector<std::vector<Put>> admits;
  size_t admit_count = 0;
  BatchScratch scratch;
  // The restored segments' allocations, a list per shard.
  std::vector<std::vector<Region>> regions;
  std::mutex regions_mu;

  std::atomic<bool> completed{true};
  std::atomic<bool> stop{false};  // the engine's destruction asks the completion to stop
  std::mutex done_mu;             // with done_cv, a wait for `completed`
  std::condition_variable done_cv;
  std::thread thread;
};

}  // namespace crescent::master
