#include "master/policy_set.h"

#include <utility>

namespace crescent::master {

namespace {

cache::PolicyOptions OptionsOf(const MasterConfig& config) {
  cache::PolicyOptions options;
  if (config.s3fifo_move_threshold != 0)
    options.s3fifo_move_threshold = config.s3fifo_move_threshold;
  return options;
}

}  // namespace

StatusOr<PolicySet::Policies> PolicySet::Make(const MasterConfig& config) {
  const cache::PolicyOptions options = OptionsOf(config);
  auto make = [&](std::string_view name) {
    return config.make_policy ? config.make_policy(name, options)
                              : cache::MakePolicy(name, options);
  };
  auto main = make(config.eviction_policy);
  if (!main.ok()) return main.status();
  auto soft = cache::MakePolicy("lru", options);
  if (!soft.ok()) return soft.status();
  auto pmem = make(config.eviction_policy);
  if (!pmem.ok()) return pmem.status();
  return Policies{std::move(main).value(), std::move(soft).value(), std::move(pmem).value()};
}

PolicySet::PolicySet(const MasterConfig& config, Policies policies)
    : p_(std::move(policies)),
      promotions_(config.pmem_promote_window_ms, config.pmem_promote_hits),
      touches_(config.touch_queue_capacity),
      tenants_(config.eviction_policy, OptionsOf(config)) {}

size_t PolicySet::SoftCount() const {
  std::lock_guard lock(mu_);
  return p_.soft->Count();
}

PolicySet::Locked::~Locked() {
  if (!ended_fill_) return;
  lock_.unlock();
  set_.filled_cv_.notify_all();
}

ObjectId PolicySet::Locked::ParentOf(ObjectId id) const {
  for (const cache::EvictionPolicy* p : {&main(), &soft(), &pmem()}) {
    if (const ObjectId parent = p->ParentOf(id); parent != cache::kNoParent) return parent;
  }
  return cache::kNoParent;
}

void PolicySet::Locked::SetCapacities(uint64_t dram_bytes, uint64_t pmem_bytes) {
  main().SetCapacity(dram_bytes);
  pmem().SetCapacity(pmem_bytes);
  set_.tenants_.SetCapacity(dram_bytes);
}

void PolicySet::Locked::Admit(const Admission& a, TimeMs now) {
  if (a.soft_until > now) {
    soft().Insert(a.id, a.size, {.parent = a.info.parent, .history = a.info.history});
    set_.soft_ends_.push({a.soft_until, a.id});
  } else {
    Of(a.tier).Insert(a.id, a.size, a.info);
  }
  if (!a.tenant.empty()) set_.tenants_.Admit(a.tenant, a.id, a.size, a.info);
}

void PolicySet::Locked::Forget(std::span<const ObjectId> ids) {
  if (set_.filling_) {
    // Forgotten again in the filled set when it is swapped in.
    auto& noted = set_.forgotten_while_filling_;
    noted.insert(noted.end(), ids.begin(), ids.end());
  }
  for (ObjectId id : ids) {
    main().Remove(id);
    soft().Remove(id);
    pmem().Remove(id);
    set_.tenants_.Forget(id);
  }
}

void PolicySet::Locked::JoinPmem(std::span<const PolicyMove> moves) {
  if (set_.filling_) {
    // Moved again in the filled set when it is swapped in.
    auto& noted = set_.moved_while_filling_;
    noted.insert(noted.end(), moves.begin(), moves.end());
  }
  for (const PolicyMove& m : moves) {
    if (!main().Contains(m.id)) continue;  // soft-pinned, or forgotten
    main().Remove(m.id);
    pmem().Insert(m.id, m.bytes, {.history = m.hash});
  }
}

void PolicySet::Locked::Access(ObjectId id, TimeMs now) {
  // Access on an id a policy does not hold is a no-op, so all can be told.
  main().Access(id);
  soft().Access(id);
  pmem().Access(id);
  set_.tenants_.Access(id);
  if (set_.promotions_.enabled() && pmem().Count() != 0 && pmem().Contains(id)) {
    set_.promotions_.NoteHit(id, now);
  }
}

void PolicySet::Locked::EndSession(ObjectId id) {
  // As Access: a policy that does not hold the id ignores it.
  main().EndSession(id);
  soft().EndSession(id);
  pmem().EndSession(id);
  set_.tenants_.EndSession(id);
}

std::optional<ObjectId> PolicySet::Locked::PopEndedSoftPin(TimeMs now) {
  auto& ends = set_.soft_ends_;
  while (!ends.empty() && ends.top().until <= now) {
    const ObjectId id = ends.top().id;
    ends.pop();
    if (!soft().Contains(id)) continue;
    soft().Remove(id);
    return id;
  }
  return std::nullopt;
}

void PolicySet::Locked::AwaitFilled() {
  set_.filled_cv_.wait(lock_, [this] { return !set_.filling_; });
}

void PolicySet::Locked::EndFill(Policies filled, std::span<const SoftPinExpiry> soft_ends,
                                uint64_t dram_bytes, uint64_t pmem_bytes,
                                const std::function<bool(ObjectId)>& complete, TimeMs now) {
  set_.p_ = std::move(filled);
  for (const SoftPinExpiry& e : soft_ends) set_.soft_ends_.push(e);
  SetCapacities(dram_bytes, pmem_bytes);
  set_.filling_ = false;  // what follows applies to the filled set
  // Objects removed after the fill found them live.
  Forget(std::exchange(set_.forgotten_while_filling_, {}));
  JoinPmem(std::exchange(set_.moved_while_filling_, {}));
  for (const Admission& a : std::exchange(set_.late_admits_, {})) {
    if (complete(a.id)) Admit(a, now);
  }
  ended_fill_ = true;
}

}  // namespace crescent::master
