#include "rpc/node_owners.h"

#include <algorithm>
#include <set>

namespace crescent::rpc {
namespace {

Status Refused(const Caller& caller, const std::string& what) {
  return Status(ErrorCode::kPermissionDenied,
                what + ", which node token '" + caller.name +
                    "' does not hold: another token mounted it, and its node is alive");
}

std::set<std::string, std::less<>> KnownNodes(const master::MasterService& master) {
  std::set<std::string, std::less<>> known;
  for (const auto& n : master.ListNodes()) known.insert(n.node);
  return known;
}

}  // namespace

bool NodeOwners::MayActOnLocked(const Caller& caller, std::string_view node) const {
  auto it = holders_.find(node);
  if (it != holders_.end() && it->second == caller.name) return true;
  const auto nodes = master_.ListNodes();
  return std::none_of(nodes.begin(), nodes.end(), [&](const auto& n) { return n.node == node; });
}

Status NodeOwners::Mount(const Caller& caller, const master::SegmentSpec& spec,
                         const std::function<Status()>& mount) {
  if (!Narrowed(caller)) return mount();
  std::lock_guard lock(mu_);
  // Claims on nodes the master has forgotten are stale: dropped, so that the
  // table stays as small as the set of live nodes.
  const auto known = KnownNodes(master_);
  std::erase_if(holders_, [&](const auto& h) { return !known.contains(h.first); });
  if (!MayActOnLocked(caller, spec.owner_node)) {
    return Refused(caller, "MountSegment on node '" + spec.owner_node + "'");
  }
  for (const master::SegmentInfo& seg : master_.ListSegments()) {
    if (seg.spec.name == spec.name && seg.spec.owner_node != spec.owner_node &&
        !MayActOnLocked(caller, seg.spec.owner_node)) {
      return Refused(caller, "MountSegment of segment '" + spec.name + "', mounted by node '" +
                                 seg.spec.owner_node + "'");
    }
  }
  Status s = mount();
  if (s.ok()) holders_[spec.owner_node] = caller.name;
  return s;
}

Status NodeOwners::CheckHeartbeat(const Caller& caller, std::string_view node) const {
  if (!Narrowed(caller)) return Status::Ok();
  std::lock_guard lock(mu_);
  if (MayActOnLocked(caller, node)) return Status::Ok();
  return Refused(caller, "Heartbeat for node '" + std::string(node) + "'");
}

Status NodeOwners::CheckUnmount(const Caller& caller, std::string_view segment) const {
  if (!Narrowed(caller)) return Status::Ok();
  std::lock_guard lock(mu_);
  for (const master::SegmentInfo& seg : master_.ListSegments()) {
    if (seg.spec.name == segment && !MayActOnLocked(caller, seg.spec.owner_node)) {
      return Refused(caller, "UnmountSegment of segment '" + seg.spec.name +
                                 "', which belongs to node '" + seg.spec.owner_node + "'");
    }
  }
  return Status::Ok();  // not mounted: the master says so
}

}  // namespace crescent::rpc
