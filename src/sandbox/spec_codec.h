// A SandboxSpec as bytes plus a list of fds, so a spec built on the host can
// be handed to a preloaded interpreter that clones the sandbox (the fds travel
// beside the bytes with SCM_RIGHTS). Pure; tested without a sandbox.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "sandbox/spec.h"

namespace airlock::sandbox {

struct EncodedSpec {
  std::string bytes;
  std::vector<int> fds;  // the attach mounts' fds, in order; not owned
};

EncodedSpec encode_spec(const SandboxSpec& spec);

// `fds` are the received descriptors, in the order they were sent; each
// attach entry's fd is replaced by the matching one. in_process is left null.
Result<SandboxSpec> decode_spec(const std::string& bytes, const std::vector<int>& fds);

}  // namespace airlock::sandbox
