// airlock session exec: submit a call, print its output live from the event
// stream (resuming with Last-Event-ID when the stream breaks, never printing
// a byte twice), then its value, error and figures. Ctrl-C interrupts the
// call once; a second Ctrl-C leaves it running and exits.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include "http/url.h"
#include "base/json_parse.h"
#include "base/terminal_text.h"
#include "cmd/airlock/session_client.h"
#include "cmd/airlock/terminal_out.h"
#include "sys/file_io.h"

using namespace airlock;
using namespace airlock::cli;
using json = nlohmann::json;

namespace {

volatile std::sig_atomic_t g_interrupts = 0;

void on_sigint(int) { g_interrupts = g_interrupts + 1; }

// SIGINT counted instead of killing airlock, while the call runs.
class CountInterrupts {
 public:
  CountInterrupts() {
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_);
  }
  ~CountInterrupts() { ::sigaction(SIGINT, &old_, nullptr); }

 private:
  struct sigaction old_ {};
};

std::optional<std::string> read_code(const SessionArgs& a) {
  switch (code_source(a)) {
    case CodeSource::kArgument:
      return code_argument(a);
    case CodeSource::kStdin: {
      auto code = sys::read_all(STDIN_FILENO, 1 << 20);
      if (!code) std::fprintf(stderr, "airlock: cannot read the code from stdin: %s\n", code.error().message().c_str());
      return code ? std::optional(*code) : std::nullopt;
    }
    case CodeSource::kFile: {
      auto code = sys::read_file(*a.code_file, 1 << 20);
      if (!code) std::fprintf(stderr, "airlock: cannot read %s: %s\n", a.code_file->c_str(), code.error().message().c_str());
      return code ? std::optional(*code) : std::nullopt;
    }
  }
  return std::nullopt;
}

// Saves the call's figures as DIR/<exec>-<n>.png; false if one could not be saved.
bool save_figures(const SessionArgs& a, const std::string& exec_id, const json& figures) {
  if (!figures.is_array() || figures.empty()) return true;
  if (!a.figures_dir) {
    std::fprintf(stderr, "airlock: the call made %zu figure(s); save them with --figures DIR\n", figures.size());
    return true;
  }
  if (auto st = sys::make_dirs(*a.figures_dir); !st) {
    std::fprintf(stderr, "airlock: cannot make %s: %s\n", a.figures_dir->c_str(), st.error().message().c_str());
    return false;
  }
  bool ok = true;
  for (size_t n = 0; n < figures.size(); ++n) {
    std::string path = *a.figures_dir + "/" + exec_id + "-" + std::to_string(n + 1) + ".png";
    auto png = figures[n].is_string() ? decode_base64(figures[n].get<std::string>()) : std::nullopt;
    Status st = png ? sys::write_file_atomic(path, *png, 0644) : fail("the figure is not base64");
    if (st) {
      std::fprintf(stderr, "airlock: figure saved to %s\n", path.c_str());
    } else {
      std::fprintf(stderr, "airlock: cannot save %s: %s\n", path.c_str(), st.error().message().c_str());
      ok = false;
    }
  }
  return ok;
}

// The final view of the call: value on stdout, error on stderr, figures saved.
int finish(const SessionArgs& a, const std::string& exec_id, const json& view) {
  const json& r = view.contains("result") && view["result"].is_object() ? view["result"] : view;
  std::string status = r.value("status", "");
  std::fflush(stdout);
  if (r.contains("value") && r["value"].is_string() && !r["value"].get<std::string>().empty())
    write_shown(STDOUT_FILENO, r["value"].get<std::string>() + "\n");
  if (r.contains("error") && r["error"].is_string() && !r["error"].get<std::string>().empty()) {
    std::string error = r["error"].get<std::string>();
    write_shown(STDERR_FILENO, error.ends_with("\n") ? error : error + "\n");
  }
  bool saved = save_figures(a, exec_id, r.value("figures", json::array()));
  int exit = exec_exit_status(view, a.shell);
  // What the code asks for is the sandbox's text: one inert line each, as `airlock run` shows it.
  for (const auto& q : r.value("data_requests", json::array()))
    if (q.is_object())
      (void)sys::write_all(STDERR_FILENO, "airlock: the call asks for data: " +
                                              quoted_text(q.value("id", "") + " " + q.value("name", "") + ": " +
                                                          q.value("why", "")) +
                                              "\n");
  if (status != "ok" && status != "error")
    std::fprintf(stderr, "airlock: exec %s ended: %s\n", quoted_text(exec_id).c_str(), quoted_text(status).c_str());
  return exit == kExitOk && !saved ? kExitFailed : exit;
}

struct Follow {
  const SessionArgs& a;
  SessionConn& conn;
  std::string session_id, exec_id, target;
  std::string last_id;   // of the last event seen: where a resumed stream starts
  uint64_t printed = 0;  // bytes of output printed so far
  bool interrupt_sent = false;
  // The job's output is shown inert on a terminal (a piece at a time).
  std::optional<TerminalStream> shown_out = terminal(STDOUT_FILENO), shown_err = terminal(STDERR_FILENO);

  static std::optional<TerminalStream> terminal(int fd) {
    return ::isatty(fd) ? std::optional<TerminalStream>(std::in_place) : std::nullopt;
  }

  // Acts on Ctrl-C; returns an exit status when the CLI should leave.
  std::optional<int> check_interrupts() {
    if (g_interrupts >= 2) {
      std::fprintf(stderr, "\nairlock: left exec %s running in session %s\n", exec_id.c_str(), session_id.c_str());
      return kExitInterrupted;
    }
    if (g_interrupts == 1 && !interrupt_sent) {
      interrupt_sent = true;
      std::fprintf(stderr, "\nairlock: interrupting exec %s (Ctrl-C again leaves it running)\n", exec_id.c_str());
      (void)call(conn, "POST", "/v1/sessions/" + api::percent_encode(session_id) + "/interrupt");
    }
    return std::nullopt;
  }

  void flush_shown() {
    if (shown_out) (void)sys::write_all(STDOUT_FILENO, shown_out->finish());
    if (shown_err) (void)sys::write_all(STDERR_FILENO, shown_err->finish());
  }

  void print_output(const api::Event& ev) {
    json d = parse_json_or_discarded(ev.data, kMaxStoredJsonDepth);
    if (!d.is_object() || !d.contains("text") || !d["text"].is_string()) return;
    uint64_t offset = d.value("offset", printed);
    std::string text = d["text"].get<std::string>();
    std::string fresh = unseen_part(printed, offset, text);
    const bool err = ev.event == "stderr";
    std::optional<TerminalStream>& shown = err ? shown_err : shown_out;
    (void)sys::write_all(err ? STDERR_FILENO : STDOUT_FILENO, shown ? shown->feed(fresh) : fresh);
    printed = std::max(printed, offset + text.size());
  }

  // Follows the stream to its final event, reconnecting when it breaks.
  int run() {
    int failures = 0;
    while (true) {
      if (auto leave = check_interrupts()) return *leave;
      auto headers = conn.auth;
      if (!last_id.empty()) headers["Last-Event-ID"] = last_id;
      api::EventStream stream = conn.http->open_events(target, headers);
      if (stream.status() == 204) return fetch_final();  // the final event was seen already
      if (stream.status() != 200) {
        if (stream.status() != 0) {
          std::fprintf(stderr, "airlock: GET %s: %s\n", target.c_str(), describe_http_error(stream.status(), "").c_str());
          return kExitFailed;
        }
        if (++failures > 20) {
          std::fprintf(stderr, "airlock: lost the service at %s (%s); exec %s may still be running\n",
                       conn.url.c_str(), stream.error().c_str(), exec_id.c_str());
          return kExitFailed;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(250 * std::min(failures, 4)));
        continue;
      }
      while (true) {
        if (auto leave = check_interrupts()) return *leave;
        auto ev = stream.next(200);
        if (!ev) {
          if (stream.ended()) break;
          continue;
        }
        failures = 0;
        if (!ev->id.empty()) last_id = ev->id;
        if (ev->event == "stdout" || ev->event == "stderr") {
          print_output(*ev);
        } else if (ev->event == "result") {
          json view = parse_json_or_discarded(ev->data, kMaxStoredJsonDepth);
          flush_shown();
          if (view.is_discarded()) return fetch_final();
          return finish(a, exec_id, view);
        }
      }
      ++failures;  // the stream ended before its final event: resume where it broke
    }
  }

  int fetch_final() {
    flush_shown();
    auto r = call(conn, "GET", "/v1/sessions/" + api::percent_encode(session_id) + "/execs/" + api::percent_encode(exec_id));
    if (!r) return kExitFailed;
    return finish(a, exec_id, parse_json_or_discarded(r->body, kMaxStoredJsonDepth));
  }
};

}  // namespace

int session_exec(const SessionArgs& a, SessionConn& conn) {
  auto code = read_code(a);
  if (!code) return kExitFailed;
  const std::string& session_id = a.positional[0];
  std::string base = "/v1/sessions/" + api::percent_encode(session_id);
  CountInterrupts counting;
  auto r = call(conn, "POST", base + "/execs", exec_body(a, *code).dump(), {{"Content-Type", "application/json"}});
  if (!r) return kExitFailed;
  json created = parse_json_or_discarded(r->body, kMaxStoredJsonDepth);
  if (!created.is_object() || !created.contains("id") || !created["id"].is_string()) {
    std::fprintf(stderr, "airlock: the service did not answer with the call's id\n");
    return kExitFailed;
  }
  std::string exec_id = created["id"].get<std::string>();
  Follow follow{a, conn, session_id, exec_id, base + "/execs/" + api::percent_encode(exec_id) + "/events"};
  int status = follow.run();
  if (a.json) {
    auto final_view = call(conn, "GET", base + "/execs/" + api::percent_encode(exec_id));
    if (final_view) print_json(parse_json_or_discarded(final_view->body, kMaxStoredJsonDepth));
  }
  return status;
}
