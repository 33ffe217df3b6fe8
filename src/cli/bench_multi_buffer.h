// `crescent bench multi-buffer` (bench_multi_buffer.cc).
#pragma once

#include <cstdint>
#include <string>

namespace crescent::cli {

struct MultiBufferFlags {
  int slices = 64;                   // per key: a layer-first page's K and V of 32 layers
  std::string slice_size = "16KiB";  // bytes per slice
  int batch = 16;                    // keys per call
  int rounds = 7;                    // alternating rounds; medians reported
  std::string transports = "tcp,shm";
  std::string json;
};

// Runs the bench on an embedded cluster; the process's exit code.
int RunMultiBufferBench(const MultiBufferFlags& f);

}  // namespace crescent::cli
