#include "rpc/key_scope.h"

#include <algorithm>
#include <iterator>

#include "master/tenant_key.h"

namespace crescent::rpc {

KeyScope::KeyScope(const Caller& caller)
    : prefix_(master::TenantPrefix(caller.tenant)),
      whole_store_(!caller.role || (*caller.role == auth::Role::kAdmin && caller.tenant.empty())) {}

std::string KeyScope::Key(std::string_view key) const {
  // Refused by the engine (master::TenantKeyValid): a mark with no tenant.
  if (master::IsTenantKey(key)) return std::string(1, master::kTenantMark);
  if (prefix_.empty()) return std::string(key);
  std::string out;
  out.reserve(prefix_.size() + key.size());
  out += prefix_;
  out += key;
  return out;
}

std::vector<std::string> KeyScope::TakeKeys(
    google::protobuf::RepeatedPtrField<std::string>* keys) const {
  std::vector<std::string> out;
  out.reserve(keys->size());
  for (std::string& k : *keys) {
    if (prefix_.empty() && !master::IsTenantKey(k)) {
      out.push_back(std::move(k));
    } else {
      out.push_back(Key(k));
    }
  }
  return out;
}

std::vector<std::string> KeyScope::TakeForPrefix(
    google::protobuf::RepeatedPtrField<std::string>* keys) const {
  if (prefix_.empty()) return TakeKeys(keys);
  return {std::make_move_iterator(keys->begin()), std::make_move_iterator(keys->end())};
}

Status KeyScope::Shown(const Status& s) const {
  if (prefix_.empty() || s.ok()) return s;
  std::string message = s.message();
  for (size_t at = message.find(prefix_); at != std::string::npos; at = message.find(prefix_, at)) {
    message.erase(at, prefix_.size());
  }
  return Status(s.code(), std::move(message));
}

}  // namespace crescent::rpc
