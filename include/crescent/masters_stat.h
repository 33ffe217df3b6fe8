// The masters of a cluster on etcd as the Stats call reports them (docs/ha.md):
// the leader, the standbys, and how far each is behind the leader's log.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace crescent {

struct MasterMemberStat {
  std::string master_id;
  std::string grpc;  // as it was started (a standby listens only once it leads)
  bool leader = false;
  uint64_t applied_records = 0;  // records of the leader's log it applied
  uint64_t lag_records = 0;      // records the leader has that it had not applied
  double lag_seconds = 0;        // how long it has been behind (0: caught up)
};

struct MastersStat {
  std::string cluster;    // empty: a single master (the rest is empty too)
  std::string etcd;       // the endpoints the answering master uses
  std::string self_id;    // the answering master
  std::string leader_id;  // empty: none known
  uint64_t leader_changes = 0;  // changes of the leader the answering master saw
  std::vector<MasterMemberStat> members;
};

}  // namespace crescent
