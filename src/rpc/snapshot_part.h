// A part of a master's snapshot file, as the ReadSnapshot RPC carries it
// (master.proto): both ends use it.
#pragma once

#include <cstdint>
#include <string>

namespace crescent::rpc {

struct SnapshotPart {
  uint64_t position = 0;    // the snapshot's log position
  uint64_t file_bytes = 0;  // the whole file's size
  std::string data;         // from the asked offset on; empty at the end
};
// The most bytes one ReadSnapshot answer carries.
inline constexpr uint32_t kMaxSnapshotPartBytes = 4u << 20;

}  // namespace crescent::rpc
