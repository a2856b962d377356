// Forwarding one request from an API node to the worker that holds what it
// names (issue 17, docs/sessions.md "Many machines"): the client's request as it
// came (method, target, body, its Authorization) plus the node key, and the
// worker's answer streamed back: status, headers and body, or Server-Sent
// Events one by one as they arrive, until either side closes.
//
// Both ways with backpressure: an upload is read from the client only as fast
// as the worker takes it, an answer from the worker only as fast as the client
// takes it, so a forwarded request holds at most `buffer_bytes` of either
// (plus one 64 KiB piece in flight), whatever the size of the file.
//
// Each forwarded request runs on a thread of its own (the HTTP client is
// synchronous), at most `max_in_flight` at once; more get 503. A forwarded
// event stream holds its thread for as long as the client listens, so the
// bound is also the bound on forwarded streams.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "http/server.h"

namespace airlock::cluster {

struct ForwardTarget {
  std::string node_id;  // named in errors the client sees
  std::string address;  // "IP:PORT", only in this node's log
};

enum class ForwardKind {
  kPlain,   // one answer, bounded by the timeout
  kEvents,  // an event stream: no overall bound, but a stream silent for event_silence_ms is dead
};

struct ForwarderOptions {
  std::string node_key;
  std::string self_node_id;
  size_t max_in_flight = 256;
  int base_timeout_ms = 60'000;     // plus the request's own wait_s (forward_message.h)
  int connect_timeout_ms = 5'000;   // also for an event stream's response header
  int event_silence_ms = 60'000;    // several of the worker's keep-alive intervals
  // What one forwarded request holds of the answer at most: an answer this
  // small (by its Content-Length) is read whole, a larger one is passed on as
  // it comes, with at most this much not yet taken by the client.
  size_t buffer_bytes = 256 << 10;
  // Told of every answer sent (its status), for the metrics; may be empty.
  std::function<void(int status)> answered;
  // One JSON object per failure to reach a node (it names the address); may be empty.
  std::function<void(const nlohmann::json&)> log;
};

class Forwarder {
 public:
  explicit Forwarder(ForwarderOptions options);
  ~Forwarder();  // stop()
  Forwarder(const Forwarder&) = delete;
  Forwarder& operator=(const Forwarder&) = delete;

  // Answers `ex` with the node's answer, later, from a thread of its own.
  // A route that streams its request body (RouteOptions::stream_body) has
  // it passed on as it arrives. Errors, answered here: 502 node_unreachable
  // (no connection, or it broke before the answer's status; after that the
  // client's answer is cut), 504 node_timeout (no answer in time), 503 busy
  // (max_in_flight reached, or stopping). Both name the node by id only.
  void send(std::shared_ptr<api::Exchange> ex, const ForwardTarget& to, ForwardKind kind);

  // Where an exchange goes when that is known only later (a job's output
  // while the job waits for a worker to claim it): `decide` runs on the
  // forwarding thread, again every 250 ms while it says kLater, until the
  // client leaves; kHere runs `here` (which answers the exchange) there.
  struct Decision {
    enum class Kind { kNode, kHere, kLater } kind = Kind::kHere;
    ForwardTarget node;  // kNode
  };
  void send_when(std::shared_ptr<api::Exchange> ex, std::function<Decision()> decide, std::function<void()> here,
                 ForwardKind kind);

  // After the HTTP server stopped (its exchanges are closed, so every
  // forwarding thread ends within a second): joins them.
  void stop();

  size_t in_flight() const;

 private:
  struct Flight {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  void run(const std::shared_ptr<api::Exchange>& ex, const ForwardTarget& to, ForwardKind kind);
  void run_events(const std::shared_ptr<api::Exchange>& ex, const ForwardTarget& to, const std::string& host,
                  uint16_t port, const std::map<std::string, std::string>& headers);
  void log_failure(const api::HttpRequest& req, const ForwardTarget& to, const std::string& why);
  // Starts `work` on a flight of its own, or answers 503.
  void launch(const std::shared_ptr<api::Exchange>& ex, std::function<void()> work);
  void answer(const std::shared_ptr<api::Exchange>& ex, api::HttpResponse r);
  void reap_locked();  // joins finished flights; under mu_

  ForwarderOptions options_;
  mutable std::mutex mu_;
  bool stopping_ = false;
  std::list<std::unique_ptr<Flight>> flights_;
};

}  // namespace airlock::cluster
