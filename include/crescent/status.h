// Status and ErrorCode: the one error vocabulary of Crescent.
//
// Every API returns a Status (or StatusOr<T>); nothing throws across a library
// boundary. ErrorCode numbers are stable: they travel on the wire, appear in
// metrics and are returned (negated) by the Python binding, so a number is never
// reused or renumbered. docs/errors.md gives the one-line meaning of each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace crescent {

enum class ErrorCode : int32_t {
  kOk = 0,
  kInvalidArgument = 1,
  kInvalidKey = 2,
  kInvalidSize = 3,
  kObjectNotFound = 4,
  kObjectAlreadyExists = 5,
  kObjectNotReady = 6,
  kObjectLeased = 7,
  kNoSpace = 8,
  kSegmentNotFound = 9,
  kSegmentAlreadyExists = 10,
  kNotOwner = 11,
  kPutNotStarted = 12,
  kLeaseExpired = 13,
  kCapabilityInvalid = 14,
  kUnavailable = 15,
  kTimeout = 16,
  kBufferTooSmall = 17,
  kNodeUnknown = 18,
  kCorruptData = 19,
  kIoError = 20,
  kInternal = 21,
  kUnsupported = 22,
  kBufferNotRegistered = 23,
  kParseError = 24,
  kClosed = 25,
  kChecksumMismatch = 26,
  kUnauthenticated = 27,
  kPermissionDenied = 28,
  kQuotaExceeded = 29,
};

// The highest number in use (codes run 0..kLastErrorCode without gaps).
inline constexpr ErrorCode kLastErrorCode = ErrorCode::kQuotaExceeded;

// Stable upper-snake name, e.g. "OBJECT_NOT_FOUND".
std::string_view ErrorCodeName(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "OK" or "NAME: message".
  std::string ToString() const;

  bool operator==(ErrorCode code) const { return code_ == code; }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT(google-explicit-constructor)
  StatusOr(ErrorCode code, std::string message) : status_(code, std::move(message)) {}

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace crescent
