// EtcdCluster: real etcd members (Debian's etcd-server) on loopback, each on
// free ports with a data dir of its own, for the tests of everything that
// stands on etcd (src/etcd, the masters' failover). Members can be stopped,
// frozen (SIGSTOP, an etcd stall) and thawed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "integration/process.h"

namespace crescent::itest {

class EtcdCluster {
 public:
  // Starts `members` members of one cluster and waits until each answers on
  // its client URL; false (with `why`) when that fails.
  bool Start(int members, const std::string& dir, std::string* why);
  ~EtcdCluster();

  // "127.0.0.1:P1,127.0.0.1:P2,..." (ParseEndpoints reads it; --etcd takes
  // it with or without http://).
  std::string endpoints() const;
  const std::string& endpoint(size_t i) const { return client_[i]; }
  size_t size() const { return members_.size(); }
  void Freeze(size_t i);  // SIGSTOP
  void Thaw(size_t i);    // SIGCONT
  void Kill(size_t i);    // SIGKILL

 private:
  std::vector<std::unique_ptr<Process>> members_;
  std::vector<std::string> client_;  // 127.0.0.1:PORT each
};

}  // namespace crescent::itest
