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
// Note: the generated classes live in crescent::rpc, so inside that namespace the
// bare name `Status` is the wire message; Crescent's is spelled crescent::Status.
#pragma once

#include "crescent/status.h"
#include "master/types.h"
#include "rpc/master.pb.h"
#include "transfer/capability.h"

namespace crescent::rpc {

void ToProto(const crescent::Status& status, Status* out);
crescent::Status FromProto(const Status& status);

void ToProto(const master::SegmentSpec& spec, SegmentSpec* out);
master::SegmentSpec FromProto(const SegmentSpec& spec);

void ToProto(const master::SegmentInfo& info, SegmentInfo* out);
master::SegmentInfo FromProto(const SegmentInfo& info);

// replica_count 0 on the wire means 1.
void ToProto(const master::PutConfig& config, PutConfig* out);
master::PutConfig FromProto(const PutConfig& config);

void ToProto(const transfer::Capability& cap, Capability* out);
StatusOr<transfer::Capability> FromProto(const Capability& cap);

}  // namespace crescent::rpc
