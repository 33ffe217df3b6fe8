// The TCP congestion control of the data plane's connections (TCP_CONGESTION),
// chosen per store node (`--tcp-congestion`) and per client
// (ClientConfig::tcp_congestion). Empty means the system's default
// (net.ipv4.tcp_congestion_control). docs/data-plane.md says why one might pick
// another: a pacing default such as BBR halves loopback bandwidth on the
// development VM.
#pragma once

#include <string>

#include "crescent/status.h"

namespace crescent::transfer {

// Sets `name` on socket `fd`; Ok and nothing done for an empty name. A clear
// kInvalidArgument when the kernel does not offer the algorithm, or does not
// let this user choose it.
Status SetCongestionControl(int fd, const std::string& name);

// Whether `name` can be set, tried on a throwaway TCP socket: for checking a
// flag or a config once, up front, instead of on every connection.
Status CheckCongestionControl(const std::string& name);

}  // namespace crescent::transfer
