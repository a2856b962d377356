// What an API node sends a worker for a forwarded request, and what of the
// worker's answer it passes back (issue 17). Pure, unit-tested
// (tests/unit/cluster_forward_test.cc); cluster/forward.* does the I/O.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "http/server.h"

namespace airlock::cluster {

struct NodeAddress {
  std::string host;  // an IP address literal (no brackets), or a host name to look up
  uint16_t port = 0;
  bool literal = true;  // host is an IP address
};
// "10.0.0.7:8470", "[fd00::7]:8470" or "worker-1.airlock:8470" (a DNS name:
// letters, digits, '-' and '.').
Result<NodeAddress> parse_node_address(const std::string& text);

// The client's headers that travel (Authorization, Content-Type,
// Idempotency-Key, Last-Event-ID, Accept), the node key, and who forwarded
// it: X-Airlock-Forwarded-By (this node's id) and X-Forwarded-For (the
// client's address). Everything else of the client's stays here.
std::map<std::string, std::string> forwarded_headers(const api::HttpRequest& request, const std::string& node_key,
                                                     const std::string& self_node_id);

// The worker's response headers worth passing on: all but the ones that
// describe one connection (Connection, Keep-Alive, Transfer-Encoding,
// Content-Length, TE, Trailer, Upgrade, Proxy-*), which this node's server
// sets itself, and Server/Date.
std::vector<std::pair<std::string, std::string>> answer_headers(const std::map<std::string, std::string>& headers);

// How long the node may take to answer: `base_ms`, plus the wait the request
// asks for (?wait_s=N, or "wait_s" in a JSON body; at most 300 s), so that a
// long poll is not cut while it legitimately waits.
int forward_timeout_ms(const api::HttpRequest& request, int base_ms);

}  // namespace airlock::cluster
