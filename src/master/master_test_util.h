// Shared fixture for the master's behaviour tests: an engine on a ManualClock,
// with helpers to mount segments and complete puts.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "master/master_service.h"
#include "master/replica_copier.h"

namespace crescent::master::testing {

// A node on which every copy and every check succeeds (counting the copies).
class CopiesDone final : public ReplicaCopier {
 public:
  std::vector<Status> Copy(std::span<const ReplicaCopy> copies, int64_t) override {
    copied += copies.size();
    return std::vector<Status>(copies.size(), Status::Ok());
  }
  std::vector<Status> Verify(std::span<const ReplicaCheck> checks, int64_t) override {
    return std::vector<Status>(checks.size(), Status::Ok());
  }
  size_t copied = 0;
};

class MasterTest : public ::testing::Test {
 protected:
  // Tests adjust config_ before calling Start() (the fixture starts lazily).
  MasterConfig config_;
  ManualClock clock_;
  std::unique_ptr<MasterService> m_;
  OperationLog* oplog_ = nullptr;  // attached by Start() when set

  MasterService& master() {
    if (!m_) Start();
    return *m_;
  }

  void Start() {
    auto m = MasterService::Create(config_, clock_, oplog_);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    m_ = std::move(m).value();
  }

  SegmentId Mount(const std::string& name, uint64_t capacity, const std::string& node = "node-a") {
    auto id = master().MountSegment({name, capacity, node, node + ":7000", Tier::kDram});
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : kNoSegment;
  }

  // PutStart + PutEnd; returns the first failing status.
  Status Put(const std::string& key, uint64_t size, const PutConfig& config = {}) {
    auto r = master().PutStart(key, size, config);
    if (!r.ok()) return r.status();
    return master().PutEnd(key, r->token);
  }

  bool Readable(const std::string& key) { return master().GetReplicaList(key).ok(); }

  // Keys "prefix0".."prefix{n-1}".
  static std::vector<std::string> Keys(const std::string& prefix, size_t n) {
    std::vector<std::string> keys;
    for (size_t i = 0; i < n; ++i) keys.push_back(prefix + std::to_string(i));
    return keys;
  }
};

}  // namespace crescent::master::testing
