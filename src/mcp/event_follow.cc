#include "mcp/event_follow.h"

#include <chrono>
#include <thread>

#include "mcp/content.h"

namespace airlock::mcp {

namespace {

using Clock = std::chrono::steady_clock;

// After a cancellation, how long the final event may take to come.
constexpr auto kAfterCancel = std::chrono::seconds(15);
constexpr int kMaxFailedOpens = 3;

}  // namespace

std::function<void(const api::Event&)> output_as_progress(const CallContext& ctx) {
  return [&ctx](const api::Event& ev) {
    auto data = nlohmann::json::parse(ev.data, nullptr, false);
    if (data.is_object() && data.contains("text") && data["text"].is_string())
      ctx.progress(cap_text(data["text"].get<std::string>(), 4096).text);
  };
}

FollowResult follow_events(ApiConnection& api, const std::string& target,
                           const std::string& final_event,
                           const std::function<void(const api::Event&)>& on_output,
                           const CallContext& ctx, const std::function<void()>& on_cancel) {
  FollowResult out;
  std::string last_id;
  int failed_opens = 0;
  std::optional<Clock::time_point> cancel_deadline;
  auto dead_after = std::chrono::milliseconds(dead_after_ms(api.target().event_keepalive_ms));
  while (true) {
    api::EventStream stream = api.events(target, last_id);
    if (stream.status() != 200) {
      if (stream.status() == 204) {  // the final event was delivered already
        out.error = "the event stream had ended";
        return out;
      }
      if (++failed_opens >= kMaxFailedOpens || (stream.status() >= 400 && stream.status() < 500)) {
        out.error =
            "cannot open the event stream: " +
            (stream.status() ? "status " + std::to_string(stream.status()) : stream.error());
        return out;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200 * failed_opens));
      continue;
    }
    failed_opens = 0;
    while (true) {
      if (ctx.is_cancelled() && !cancel_deadline) {
        on_cancel();
        out.cancelled = true;
        cancel_deadline = Clock::now() + kAfterCancel;
      }
      if (cancel_deadline && Clock::now() > *cancel_deadline) {
        out.error = "the call was cancelled and did not end in time";
        return out;
      }
      auto ev = stream.next(200);
      if (ev) {
        if (ev->event == final_event) {
          out.final = std::move(*ev);
          return out;
        }
        if (!ev->id.empty()) last_id = ev->id;
        on_output(*ev);
        continue;
      }
      if (stream.ended()) break;  // dropped: resume from last_id
      if (Clock::now() - stream.last_bytes_at() > dead_after) {
        stream.close();  // silent past the keep-alive: dead; resume
        break;
      }
    }
    ++out.reconnects;
  }
}

}  // namespace airlock::mcp
