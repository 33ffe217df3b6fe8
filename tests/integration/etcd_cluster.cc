#include "integration/etcd_cluster.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "integration/raw_socket.h"

namespace crescent::itest {

bool EtcdCluster::Start(int members, const std::string& dir, std::string* why) {
  std::vector<std::string> peer;
  std::string initial;
  for (int i = 0; i < members; ++i) {
    client_.push_back("127.0.0.1:" + std::to_string(PickFreePort()));
    peer.push_back("http://127.0.0.1:" + std::to_string(PickFreePort()));
    initial += (i ? "," : "") + ("m" + std::to_string(i)) + "=" + peer.back();
  }
  for (int i = 0; i < members; ++i) {
    const std::string name = "m" + std::to_string(i);
    const std::string url = "http://" + client_[i];
    members_.push_back(std::make_unique<Process>(
        std::vector<std::string>{
            "/usr/bin/etcd", "--name", name, "--data-dir", dir + "/etcd-" + name,
            "--listen-client-urls", url, "--advertise-client-urls", url, "--listen-peer-urls",
            peer[i], "--initial-advertise-peer-urls", peer[i], "--initial-cluster", initial,
            "--initial-cluster-state", "new", "--initial-cluster-token", "crescent-test"},
        dir + "/etcd-" + name + ".log"));
    if (!members_.back()->started()) {
      *why = "cannot start /usr/bin/etcd (install etcd-server: scripts/install-deps.sh)";
      return false;
    }
  }
  for (auto& m : members_) {
    if (!m->WaitForLine("ready to serve client requests", std::chrono::seconds(30))) {
      *why = "etcd did not start:\n" + m->Output();
      return false;
    }
  }
  return true;
}

EtcdCluster::~EtcdCluster() {
  for (auto& m : members_) {
    m->Kill(SIGCONT);
    m->Kill(SIGKILL);
    m->Wait(std::chrono::seconds(10));
  }
}

std::string EtcdCluster::endpoints() const {
  std::string out;
  for (const std::string& c : client_) out += (out.empty() ? "" : ",") + c;
  return out;
}

void EtcdCluster::Freeze(size_t i) { members_[i]->Freeze(); }
void EtcdCluster::Thaw(size_t i) { members_[i]->Kill(SIGCONT); }
void EtcdCluster::Kill(size_t i) {
  members_[i]->Kill(SIGKILL);
  members_[i]->Wait(std::chrono::seconds(10));
}

}  // namespace crescent::itest
