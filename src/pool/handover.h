// Moving a prepared sandbox between airlock processes: the warm pool's
// process hands one to the `airlock run` that will use it, over a unix socket,
// as one message whose descriptors (init's pidfd and sync socket, the output
// pipes, the mounts, the job directory's and uid lease's locks) travel with
// SCM_RIGHTS. Whoever holds the descriptors owns the sandbox.
#pragma once

#include <optional>
#include <string>

#include "base/result.h"
#include "pool/prepared.h"

namespace airlock::jobs {

// The pool's socket in a state directory.
std::string pool_socket_path(const std::string& state_dir);

// A socket connected to the pool at `socket_path`, or an error saying why
// there is none to talk to (err: ENOENT or ECONNREFUSED when no pool runs).
Result<UniqueFd> connect_pool(const std::string& socket_path);

// The pool's answer when it hands over nothing: `why`'s kind and text
// (kUnavailable: the class is empty right now; kNotFound: no such class;
// kInvalid: a malformed request). Pure.
std::string none_reply(const Error& why);

// Sends `sandbox` over `sock`; on success this process no longer owns it
// (the object is emptied without killing anything).
Status send_prepared(int sock, PreparedSandbox& sandbox);
// Receives one; its cgroup is reopened by name through `cgroups`. A "none"
// answer is an error of the kind the pool gave.
Result<PreparedSandbox> receive_prepared(int sock, sandbox::CgroupBackend& cgroups);

// Client side of the pool: asks the pool listening at `socket_path` for a
// sandbox of `class_key`. Errors by kind: kUnavailable, the class is empty
// right now (worth waiting for a refill); kNotFound, no pool runs there or it
// keeps no such class; kInternal, it did not answer within 10 s or sent
// something malformed. Whatever came with a failed answer is closed, which
// ends that sandbox.
// A preloaded class's sandbox is `tenant`'s (forked from its own interpreter).
Result<PreparedSandbox> take_from_pool(const std::string& socket_path, const std::string& class_key,
                                       sandbox::CgroupBackend& cgroups, const std::string& tenant = "");

// The pool's stats (WarmPool::stats() as JSON text), or an error when no pool
// answers at `socket_path`.
Result<std::string> pool_stats(const std::string& socket_path);

}  // namespace airlock::jobs
