#include "crescent/status.h"

namespace crescent {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "OK";
    case ErrorCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case ErrorCode::kInvalidKey: return "INVALID_KEY";
    case ErrorCode::kInvalidSize: return "INVALID_SIZE";
    case ErrorCode::kObjectNotFound: return "OBJECT_NOT_FOUND";
    case ErrorCode::kObjectAlreadyExists: return "OBJECT_ALREADY_EXISTS";
    case ErrorCode::kObjectNotReady: return "OBJECT_NOT_READY";
    case ErrorCode::kObjectLeased: return "OBJECT_LEASED";
    case ErrorCode::kNoSpace: return "NO_SPACE";
    case ErrorCode::kSegmentNotFound: return "SEGMENT_NOT_FOUND";
    case ErrorCode::kSegmentAlreadyExists: return "SEGMENT_ALREADY_EXISTS";
    case ErrorCode::kNotOwner: return "NOT_OWNER";
    case ErrorCode::kPutNotStarted: return "PUT_NOT_STARTED";
    case ErrorCode::kLeaseExpired: return "LEASE_EXPIRED";
    case ErrorCode::kCapabilityInvalid: return "CAPABILITY_INVALID";
    case ErrorCode::kUnavailable: return "UNAVAILABLE";
    case ErrorCode::kTimeout: return "TIMEOUT";
    case ErrorCode::kBufferTooSmall: return "BUFFER_TOO_SMALL";
    case ErrorCode::kNodeUnknown: return "NODE_UNKNOWN";
    case ErrorCode::kCorruptData: return "CORRUPT_DATA";
    case ErrorCode::kIoError: return "IO_ERROR";
    case ErrorCode::kInternal: return "INTERNAL";
    case ErrorCode::kUnsupported: return "UNSUPPORTED";
    case ErrorCode::kBufferNotRegistered: return "BUFFER_NOT_REGISTERED";
    case ErrorCode::kParseError: return "PARSE_ERROR";
    case ErrorCode::kClosed: return "CLOSED";
    case ErrorCode::kChecksumMismatch: return "CHECKSUM_MISMATCH";
    case ErrorCode::kUnauthenticated: return "UNAUTHENTICATED";
    case ErrorCode::kPermissionDenied: return "PERMISSION_DENIED";
    case ErrorCode::kQuotaExceeded: return "QUOTA_EXCEEDED";
  }
  return "UNKNOWN";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(ErrorCodeName(code_));
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

}  // namespace crescent
