// Following an event stream of the API (a job's or a session call's live
// output) until its final event: keep-alive comments tell a silent call
// from a dead connection, a dead or dropped stream is resumed with
// Last-Event-ID, and a cancelled tool call runs `on_cancel` once.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "http/sse.h"
#include "mcp/api_backend.h"
#include "mcp/call_context.h"

namespace airlock::mcp {

struct FollowResult {
  std::optional<api::Event> final;  // the final event, when it came
  bool cancelled = false;           // on_cancel ran
  int reconnects = 0;
  std::string error;  // why the stream was given up, when final is empty
};

// A stream that delivered nothing (no event, no keep-alive comment) for
// three keep-alive intervals is taken for dead.
inline int dead_after_ms(int keepalive_ms) { return 3 * keepalive_ms; }

// An on_output that sends each output event's text as progress (at most
// 4 KiB of it a notification).
std::function<void(const api::Event&)> output_as_progress(const CallContext& ctx);

FollowResult follow_events(ApiConnection& api, const std::string& target,
                           const std::string& final_event,
                           const std::function<void(const api::Event&)>& on_output,
                           const CallContext& ctx, const std::function<void()>& on_cancel);

}  // namespace airlock::mcp
