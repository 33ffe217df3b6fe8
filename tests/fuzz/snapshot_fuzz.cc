// Fuzzes the snapshot decoder (durability/snapshot_file.h) over whole files.
//
// Invariants:
//  - Decoding never crashes or reads past its input; a refusal is
//    kCorruptData or kUnsupported (another format version).
//  - Every record it hands over is one the record decoder accepts, so it
//    re-encodes and decodes back equal; an accepted file hands over exactly
//    the record count its trailer states.
#include "durability/snapshot_file.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using crescent::ErrorCode;
  using crescent::Status;
  using crescent::master::DecodeLogRecord;
  using crescent::master::EncodeLogRecord;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  uint64_t handed = 0;
  auto info =
      crescent::durability::DecodeSnapshot(bytes, "fuzz", [&](crescent::master::LogRecord r) {
        auto again = DecodeLogRecord(EncodeLogRecord(r));
        FUZZ_CHECK(again.ok() && *again == r);
        ++handed;
        return Status::Ok();
      });
  if (!info.ok()) {
    FUZZ_CHECK(info.status().code() == ErrorCode::kCorruptData ||
               info.status().code() == ErrorCode::kUnsupported);
    return 0;
  }
  FUZZ_CHECK(info->records == handed);
  return 0;
}
