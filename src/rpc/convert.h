// Conversions between the wire messages of master.proto and Crescent's own types.
//
// Invariants:
//  - A Status travels as {ErrorCode number, message}; a number this build does not
//    know (a newer peer) arrives as kInternal with the number in the message, so
//    an unknown code is never mistaken for OK.
//  - A capability off the wire is accepted only with a 32-byte tag and a known op;
//    anything else is kCapabilityInvalid (the tag itself is the store's to verify).
//  - FromProto of a SegmentSpec trusts `tier` to have been validated (0 or 1);
//    any other value maps to kDram.
//
// The generated messages live in crescent::proto (messages.proto): `Status` is
// Crescent's, proto::Status the wire message.
#pragma once

#include "crescent/status.h"
#include "master/types.h"
#include "rpc/messages.pb.h"
#include "transfer/capability.h"

namespace crescent::rpc {

void ToProto(const Status& status, proto::Status* out);
Status FromProto(const proto::Status& status);

void ToProto(const master::SegmentSpec& spec, proto::SegmentSpec* out);
master::SegmentSpec FromProto(const proto::SegmentSpec& spec);

void ToProto(const master::SegmentInfo& info, proto::SegmentInfo* out);
master::SegmentInfo FromProto(const proto::SegmentInfo& info);

// replica_count 0 on the wire means 1.
void ToProto(const master::PutConfig& config, proto::PutConfig* out);
master::PutConfig FromProto(const proto::PutConfig& config);

void ToProto(const transfer::Capability& cap, proto::Capability* out);
StatusOr<transfer::Capability> FromProto(const proto::Capability& cap);

}  // namespace crescent::rpc
