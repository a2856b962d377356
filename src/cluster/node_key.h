// The node key (issue 17, docs/sessions.md "Many machines"): the secret every node of a
// cluster shares. API nodes send it with each request they forward; worker
// nodes answer /v1/* only with it. It is read from the configuration file
// (node_key) or a file of its own (node_key_file), never from the command
// line, where any local user could read it in /proc/PID/cmdline.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace airlock::cluster {

inline constexpr const char* kNodeKeyHeader = "X-Airlock-Node-Key";
// A key shorter than this is refused: it is the only thing between the
// network and every tenant's sessions on a worker.
inline constexpr size_t kMinNodeKeyBytes = 32;
inline constexpr size_t kMaxNodeKeyBytes = 1024;

// A usable key: kMinNodeKeyBytes..kMaxNodeKeyBytes of printable ASCII
// without spaces (it travels as an HTTP header value).
Status check_node_key(std::string_view key);

// The key of a node from its configuration: `inline_key` (node_key) or the
// first line of `key_file` (node_key_file; it must not be readable by group
// or others). `required` (role api or worker): a missing key is an error
// that says how to set one. Not required and neither set: "".
Result<std::string> resolve_node_key(const std::string& inline_key, const std::string& key_file, bool required);

// Whether `presented` is `expected`, in time that depends on neither (both
// are hashed first, then compared with CRYPTO_memcmp): a client learns
// nothing from how long a wrong key takes. An empty `expected` matches nothing.
bool node_key_matches(std::string_view expected, std::string_view presented);

}  // namespace airlock::cluster
