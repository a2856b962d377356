// What a session's sandbox runs: a keeper (`python3 -c keeper_source()
// kernel_source() [fork]`, the payload) that runs the kernel as its child and
// starts a fresh one whenever it dies, and the Python kernel itself. Their
// source is src/sessions/keeper.py and kernel.py, compiled in by CMake
// (session_python.cc.in). With "fork" the keeper is a fork of the preloaded
// interpreter and each kernel a fork of the keeper (no exec): the keeper's
// secret is in a MADV_WIPEONFORK page, so a kernel never holds it.
//
// Processes: init -> keeper (alone in the payload's process group, so init's
// kSignal reaches only it) -> kernel (a session of its own) -> the code's
// subprocesses; a shell call runs in a process group of its own inside the
// kernel's session. The keeper routes signals:
//   SIGINT  -> SIGINT to the kernel's process group (a running Python call
//              gets KeyboardInterrupt; a shell call's group is sent SIGINT,
//              then SIGKILL a second later, by the kernel);
//   SIGUSR1 -> SIGKILL to every process of the kernel's session (restart).
// Whenever the kernel ends, the keeper kills what is left of its session,
// reports {"event": "kernel_exited", "reason"} and starts a new kernel.
// Processes the code moved into a session of their own (setsid, daemons)
// outlive a restart; they die with the sandbox.
//
// The kernel reads one JSON request a line ({"id", "kind": python|shell,
// "code"}) on the pipe the keeper inherited as stdin (its own stdin, which
// the code and its subprocesses see, is /dev/null). Its fds 1 and 2 are
// pipes of its own: whatever the code or its subprocesses write there is
// read by a pump thread and sent as output events. Only the kernel's private
// channel (a dup of the host's stdout pipe) carries protocol lines, each
// kKernelMark + one JSON object:
//   {"event": "ready"}                                  a kernel has started
//   {"event": "started", "id"}                          it took request id
//   {"event": "output", "id" (or null between calls), "stream": stdout|stderr, "text"}
//   {"event": "answer", "id", "status" (ok, error, interrupted), "result"
//    (repr of the last expression), "html" (its _repr_html_), "error"
//    (traceback, or the shell's exit status), "figures" (every open
//    matplotlib figure as base64 PNG, then closed), "ms", "exit_code", "cwd"}
//   {"event": "request", "id", "line" (or null: longer than the limit), "bytes"}
//                                                       a data request line the
//                                                       call sent (before its answer)
// A request also carries "requests": {"count", "bytes"} (the lines the host
// takes from the call, data requests) and "answers": {"r1": {"state",
// "reason"?}} (airlock_request.answer); an answer carries "requests_over":
// {"lines", "bytes"}, the lines past the count.
// The host treats every line as untrusted (see session_protocol.h).
//
// Shell calls run `bash -c` (or /bin/sh) with the working directory and
// exported environment the previous shell call left, which the wrapper
// dumps to a kernel-private file after the code; `exit` in the code ends the
// shell before the dump (that call's cd/export are then not kept).
#pragma once

#include <string>
#include <string_view>

namespace airlock::jobs {

inline constexpr const char* kKernelMark = "\x1e" "airlock-kernel ";
inline constexpr std::string_view kKernelMarkView = kKernelMark;

const std::string& keeper_source();
const std::string& kernel_source();

}  // namespace airlock::jobs
