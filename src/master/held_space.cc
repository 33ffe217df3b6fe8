#include "master/held_space.h"

#include <algorithm>
#include <utility>

namespace crescent::master {

void HeldSpace::Hold(std::vector<ReplicaSlot> slots, uint64_t slot_bytes, TimeMs until) {
  if (slots.empty()) return;
  std::lock_guard lock(mu_);
  bytes_ += slot_bytes * slots.size();
  held_.push(Held{until, std::move(slots), slot_bytes});
}

std::vector<ReplicaSlot> HeldSpace::TakeDue(TimeMs now) {
  std::vector<ReplicaSlot> due;
  std::lock_guard lock(mu_);
  while (!held_.empty() && held_.top().until <= now) {
    const Held& h = held_.top();
    due.insert(due.end(), h.slots.begin(), h.slots.end());
    bytes_ -= h.slot_bytes * h.slots.size();
    held_.pop();
  }
  return due;
}

void HeldSpace::ForgetOn(std::span<const SegmentId> segments) {
  std::lock_guard lock(mu_);
  std::vector<Held> kept;
  while (!held_.empty()) {
    Held h = held_.top();
    held_.pop();
    const size_t before = h.slots.size();
    std::erase_if(h.slots, [&](const ReplicaSlot& r) {
      return std::find(segments.begin(), segments.end(), r.segment) != segments.end();
    });
    bytes_ -= h.slot_bytes * (before - h.slots.size());
    if (!h.slots.empty()) kept.push_back(std::move(h));
  }
  for (Held& h : kept) held_.push(std::move(h));
}

uint64_t HeldSpace::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

std::optional<TimeMs> HeldSpace::NextDue() const {
  std::lock_guard lock(mu_);
  if (held_.empty()) return std::nullopt;
  return held_.top().until;
}

}  // namespace crescent::master
