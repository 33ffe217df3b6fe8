// A copy of another master's snapshot file (snapshot_file.h) written into a
// data dir: a cluster's master bootstraps from its leader's snapshot, and a
// standby keeps copies of it (docs/ha.md). The parts arrive in order; the copy
// is written under a temporary name, checked whole (CheckSnapshot), fsynced
// and renamed into place, so the dir holds a complete, checked snapshot or
// nothing new.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "crescent/status.h"
#include "durability/snapshot_file.h"

namespace crescent::durability {

// The part of the file from `offset` on (empty: the end), its *file_bytes
// and the snapshot's *position as the source says them; each call must name
// the same snapshot.
using SnapshotPartFn = std::function<Status(uint64_t offset, uint64_t* position,
                                            uint64_t* file_bytes, std::string* data)>;

// Copies the snapshot `read` yields into `dir`; its SnapshotInfo once checked
// and in place. kCorruptData when the copy does not check, or the source
// changed its snapshot or size mid-copy.
StatusOr<SnapshotInfo> CopySnapshot(const std::string& dir, const SnapshotPartFn& read);

}  // namespace crescent::durability
