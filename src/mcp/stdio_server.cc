#include "mcp/stdio_server.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <list>
#include <mutex>
#include <thread>

#include "mcp/in_flight.h"
#include "mcp/line_reader.h"
#include "mcp/protocol.h"

namespace airlock::mcp {

using json = nlohmann::json;

namespace {

class Writer {
 public:
  explicit Writer(int fd) : fd_(fd) {}
  void send(const json& message) {
    std::string line = serialize(message) + "\n";
    std::lock_guard lock(mu_);
    size_t done = 0;
    while (done < line.size()) {
      ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the client went away; reading ends too
      done += static_cast<size_t>(n);
    }
  }

 private:
  int fd_;
  std::mutex mu_;
};

}  // namespace

int serve_stdio(const ApiTarget& target, int in_fd, int out_fd) {
  Writer out(out_fd);
  InFlight calls(kMaxStdioCalls);
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::list<Worker> workers;
  ApiFactory api = [target] { return std::make_unique<ApiConnection>(target); };
  LineReader reader(kMaxMessageBytes);
  char buf[64 << 10];
  while (true) {
    ssize_t n = ::read(in_fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reader.feed(std::string_view(buf, static_cast<size_t>(n)));
    while (auto line = reader.next()) {
      if (line->too_long) {
        out.send(error_response(nullptr, kInvalidRequest, "the message is larger than 16 MiB"));
        continue;
      }
      if (line->text.find_first_not_of(" \t") == std::string::npos) continue;
      auto m = parse_message(line->text);
      if (!m) {
        out.send(m.error());
        continue;
      }
      if (auto id = cancelled_request(*m)) {
        calls.cancel(in_flight_key("", *id));
        continue;
      }
      if (!is_tool_call(*m)) {
        if (auto reply = answer(*m, CallContext{}, api)) out.send(*reply);
        continue;
      }
      std::string key = in_flight_key("", m->id);
      auto flag = calls.add(key);
      if (!flag) {
        out.send(error_response(m->id, kInvalidRequest,
                                calls.size() >= calls.max_calls()
                                    ? "too many tool calls at once (16): wait for one to end"
                                    : "a request with this id is still in flight"));
        continue;
      }
      // Join the threads of calls that ended.
      std::erase_if(workers, [](Worker& w) {
        if (!w.done->load()) return false;
        w.thread.join();
        return true;
      });
      auto done = std::make_shared<std::atomic<bool>>(false);
      std::thread thread([&out, &calls, &api, key, flag, done, msg = std::move(*m)] {
        CallContext ctx;
        ctx.cancelled = flag;
        if (auto token = progress_token(msg)) {
          auto count = std::make_shared<int>(0);
          ctx.progress = [&out, token = *token, count](const std::string& text) {
            out.send(progress_notification(token, ++*count, text));
          };
        }
        auto reply = answer(msg, ctx, api);
        calls.remove(key);
        // A cancelled request gets no response (the protocol says so).
        if (reply && !flag->load()) out.send(*reply);
        done->store(true);
      });
      workers.push_back(Worker{std::move(thread), done});
    }
  }
  // The client closed stdin: the calls under way still finish and answer
  // (a client that wants them stopped cancels them first, or ends us).
  for (auto& w : workers) w.thread.join();
  return 0;
}

}  // namespace airlock::mcp
