// LogRecord: one state change of the master as the operation log holds it,
// and its byte encoding. Only what a snapshot would see is logged:
//  - a segment mounted (its id, spec and so its endpoint, which carries the
//    node's mount epoch) or unmounted (which drops its replicas);
//  - a put ended (the object as it became visible: size, checksum, replicas,
//    pins and chain parent);
//  - an object removed, evicted, or dropped because its last replica went bad;
//  - one replica dropped (a reader's checksum did not match);
//  - a session hint: the conversation the object belongs to has ended
//    (MasterService::EndSession). Only logs carry it: a snapshot keeps no
//    marks, so a restore re-applies those logged after its snapshot.
// Pending puts are not logged: a restore revokes every put that was in flight,
// so neither their start nor their revocation changes what it rebuilds. Pins
// are set by the put itself (PutConfig) and logged with its end.
//
// Encoding (common/coding.h): a type byte, then the fields in order; integers
// as LEB128 varints, strings as a varint length and the bytes. Decode()
// refuses a record that is cut short, has bytes left over, holds a varint in
// any but its one encoding, or holds a value out of range with kCorruptData,
// and never reads past its input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "crescent/status.h"
#include "master/object_entry.h"
#include "master/types.h"

namespace crescent::master {

enum class LogRecordType : uint8_t {
  kSegmentMounted = 1,
  kSegmentUnmounted = 2,
  kPutEnded = 3,
  kObjectRemoved = 4,
  kReplicaDropped = 5,
  // 6 and 7 are taken on disk: a kSegmentMounted that carries its file
  // identity, and one that carries the owner token's verifier (log_record.cc).
  kSessionEnded = 8,
};

// Why an object left (kObjectRemoved).
enum class RemovalReason : uint8_t { kRemoved = 0, kEvicted = 1, kCorrupt = 2 };

struct LogRecord {
  LogRecordType type = LogRecordType::kPutEnded;
  // kSegmentMounted, kSegmentUnmounted; kReplicaDropped: the replica's segment.
  SegmentId segment = kNoSegment;
  // kSegmentMounted; its owner_token is the token's verifier
  // (owner_verifier.h), as the engine keeps it.
  SegmentSpec spec;
  // kPutEnded, kObjectRemoved, kReplicaDropped, kSessionEnded.
  std::string key;
  // kPutEnded.
  uint64_t size = 0;
  uint64_t checksum = 0;
  std::vector<ReplicaSlot> replicas;
  std::string parent_key;
  bool hard_pin = false;
  TimeMs soft_pin_until = 0;                       // on the master's clock; 0: none
  RemovalReason reason = RemovalReason::kRemoved;  // kObjectRemoved
  uint64_t offset = 0;                             // kReplicaDropped

  bool operator==(const LogRecord&) const = default;
};

// The kPutEnded record of complete (or ending) entry `e`, without its chain
// parent (the entry does not keep it: a snapshot asks the policy, Capture);
// under its shard lock.
LogRecord PutEndedRecord(const ObjectEntry& e);

std::string EncodeLogRecord(const LogRecord& record);
StatusOr<LogRecord> DecodeLogRecord(std::string_view bytes);
// The same into *out, reusing its memory (a reader decoding many records);
// on an error *out holds a partly decoded record.
Status DecodeLogRecordInto(std::string_view bytes, LogRecord* out);

}  // namespace crescent::master
