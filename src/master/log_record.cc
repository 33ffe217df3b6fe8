// Encoding of LogRecord (log_record.h). The decoder checks every length
// against what is left before reading, and refuses trailing bytes.
#include "master/log_record.h"

#include "common/coding.h"
#include "master/owner_verifier.h"

namespace crescent::master {

namespace {

// The type bytes of a segment mount, each read back as
// LogRecordType::kSegmentMounted:
//  - 1 (kSegmentMounted): written before file identities were kept; its owner
//    token in clear.
//  - 6: with its file identity (SegmentSpec::file_identity); its owner token
//    in clear.
//  - 7, what is written now: as 6, with the owner token's verifier
//    (owner_verifier.h) instead of the token.
// The decoder turns a clear token into its verifier, so that a data dir
// written before verifiers were kept restores, and its nodes take their
// segments back with the tokens they hold.
constexpr uint8_t kSegmentMountedWithFile = 6;
constexpr uint8_t kSegmentMountedVerified = 7;

// Keys are at most 65535 bytes (ObjectEntry::key_len); names and endpoints
// are bounded alike, so a corrupt length never asks for a huge allocation.
constexpr uint64_t kMaxStringBytes = 65535;
constexpr uint64_t kMaxReplicas = 255;

Status Corrupt(std::string_view what) {
  return Status(ErrorCode::kCorruptData, "log record: " + std::string(what));
}

}  // namespace

LogRecord PutEndedRecord(const ObjectEntry& e) {
  LogRecord r;
  r.type = LogRecordType::kPutEnded;
  r.key = e.key_view();
  r.size = e.size;
  r.checksum = e.checksum;
  for (size_t i = 0; i < e.num_replicas; ++i) r.replicas.push_back(e.replica(i));
  r.hard_pin = e.hard_pin != 0;
  r.soft_pin_until = e.soft_pin_until();
  return r;
}

std::string EncodeLogRecord(const LogRecord& r) {
  std::string out;
  out.push_back(static_cast<char>(r.type));
  switch (r.type) {
    case LogRecordType::kSegmentMounted:
      PutVarint(out, r.segment);
      PutLengthPrefixed(out, r.spec.name);
      PutVarint(out, r.spec.capacity);
      PutLengthPrefixed(out, r.spec.owner_node);
      PutLengthPrefixed(out, r.spec.endpoint);
      out.push_back(static_cast<char>(r.spec.tier));
      PutVarint(out, r.spec.owner_token);
      PutVarint(out, r.spec.file_identity);
      out[0] = static_cast<char>(kSegmentMountedVerified);
      break;
    case LogRecordType::kSegmentUnmounted: PutVarint(out, r.segment); break;
    case LogRecordType::kPutEnded:
      PutLengthPrefixed(out, r.key);
      PutVarint(out, r.size);
      PutVarint(out, r.checksum);
      PutVarint(out, r.replicas.size());
      for (const ReplicaSlot& s : r.replicas) {
        PutVarint(out, s.segment);
        PutVarint(out, s.alloc_node);
        PutVarint(out, s.alloc_generation);
        PutVarint(out, s.offset);
      }
      PutLengthPrefixed(out, r.parent_key);
      out.push_back(r.hard_pin ? 1 : 0);
      PutVarint(out, static_cast<uint64_t>(r.soft_pin_until));
      break;
    case LogRecordType::kObjectRemoved:
      PutLengthPrefixed(out, r.key);
      out.push_back(static_cast<char>(r.reason));
      break;
    case LogRecordType::kReplicaDropped:
      PutLengthPrefixed(out, r.key);
      PutVarint(out, r.segment);
      PutVarint(out, r.offset);
      break;
    case LogRecordType::kSessionEnded: PutLengthPrefixed(out, r.key); break;
  }
  return out;
}

Status DecodeLogRecordInto(std::string_view bytes, LogRecord* out) {
  // Every field back to its default, keeping the strings' and the replica
  // vector's memory for the next record.
  std::string key = std::move(out->key), parent = std::move(out->parent_key);
  std::vector<ReplicaSlot> replicas = std::move(out->replicas);
  *out = LogRecord{};
  key.clear();
  parent.clear();
  replicas.clear();
  out->key = std::move(key);
  out->parent_key = std::move(parent);
  out->replicas = std::move(replicas);
  LogRecord& r = *out;
  ByteReader in(bytes);
  uint8_t type;
  if (!in.Byte(&type)) return Corrupt("empty");
  // A mount written before file identities were kept has none (0).
  const bool verified = type == kSegmentMountedVerified;
  const bool with_file = type == kSegmentMountedWithFile || verified;
  const bool clear_token = type == static_cast<uint8_t>(LogRecordType::kSegmentMounted) ||
                           type == kSegmentMountedWithFile;
  if (with_file) type = static_cast<uint8_t>(LogRecordType::kSegmentMounted);
  r.type = static_cast<LogRecordType>(type);
  switch (r.type) {
    case LogRecordType::kSegmentMounted: {
      uint8_t tier;
      if (!in.Varint32(&r.segment) || !in.LengthPrefixed(&r.spec.name, kMaxStringBytes) ||
          !in.Varint(&r.spec.capacity) || !in.LengthPrefixed(&r.spec.owner_node, kMaxStringBytes) ||
          !in.LengthPrefixed(&r.spec.endpoint, kMaxStringBytes) || !in.Byte(&tier) ||
          !in.Varint(&r.spec.owner_token)) {
        return Corrupt("truncated segment mount");
      }
      if (with_file && !in.Varint(&r.spec.file_identity)) return Corrupt("truncated segment mount");
      if (tier > static_cast<uint8_t>(Tier::kPmem)) return Corrupt("unknown tier");
      if (clear_token) r.spec.owner_token = OwnerVerifier(r.spec.name, r.spec.owner_token);
      r.spec.tier = static_cast<Tier>(tier);
      break;
    }
    case LogRecordType::kSegmentUnmounted:
      if (!in.Varint32(&r.segment)) return Corrupt("truncated segment unmount");
      break;
    case LogRecordType::kPutEnded: {
      uint64_t n;
      if (!in.LengthPrefixed(&r.key, kMaxStringBytes) || !in.Varint(&r.size) ||
          !in.Varint(&r.checksum) || !in.Varint(&n)) {
        return Corrupt("truncated put");
      }
      if (n == 0 || n > kMaxReplicas) return Corrupt("replica count out of range");
      if (r.size > kMaxObjectSize) return Corrupt("object size out of range");
      r.replicas.resize(n);
      for (ReplicaSlot& s : r.replicas) {
        if (!in.Varint32(&s.segment) || !in.Varint32(&s.alloc_node) ||
            !in.Varint32(&s.alloc_generation) || !in.Varint(&s.offset)) {
          return Corrupt("truncated replica");
        }
      }
      uint8_t hard;
      uint64_t soft;
      if (!in.LengthPrefixed(&r.parent_key, kMaxStringBytes) || !in.Byte(&hard) ||
          !in.Varint(&soft)) {
        return Corrupt("truncated put");
      }
      if (hard > 1) return Corrupt("bad hard-pin flag");
      if (soft > static_cast<uint64_t>(INT64_MAX)) return Corrupt("soft pin out of range");
      r.hard_pin = hard == 1;
      r.soft_pin_until = static_cast<TimeMs>(soft);
      break;
    }
    case LogRecordType::kObjectRemoved: {
      uint8_t reason;
      if (!in.LengthPrefixed(&r.key, kMaxStringBytes) || !in.Byte(&reason)) {
        return Corrupt("truncated removal");
      }
      if (reason > static_cast<uint8_t>(RemovalReason::kCorrupt)) return Corrupt("unknown reason");
      r.reason = static_cast<RemovalReason>(reason);
      break;
    }
    case LogRecordType::kReplicaDropped:
      if (!in.LengthPrefixed(&r.key, kMaxStringBytes) || !in.Varint32(&r.segment) ||
          !in.Varint(&r.offset)) {
        return Corrupt("truncated replica drop");
      }
      break;
    case LogRecordType::kSessionEnded:
      if (!in.LengthPrefixed(&r.key, kMaxStringBytes)) return Corrupt("truncated session end");
      break;
    default: return Corrupt("unknown type " + std::to_string(type));
  }
  if (!in.done()) return Corrupt("trailing bytes");
  if ((r.type == LogRecordType::kPutEnded || r.type == LogRecordType::kObjectRemoved ||
       r.type == LogRecordType::kReplicaDropped || r.type == LogRecordType::kSessionEnded) &&
      r.key.empty()) {
    return Corrupt("empty key");
  }
  return Status::Ok();
}

StatusOr<LogRecord> DecodeLogRecord(std::string_view bytes) {
  LogRecord r;
  if (Status s = DecodeLogRecordInto(bytes, &r); !s.ok()) return s;
  return r;
}

}  // namespace crescent::master
