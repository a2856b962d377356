// The built-in "host" image: a read-only view of the host's system
// directories (/usr and the /bin, /lib... links or directories) plus a
// synthetic /etc (a passwd entry for the sandbox user, hosts, no resolver, no
// host secrets) with only the public files programs need bound in read-only.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "sandbox/base_layout.h"
#include "sandbox/spec.h"

namespace airlock::sandbox {

struct ImageInfo {
  std::string name;
  std::string digest;  // "sha256:<hex>"; changes when the image's contents change
  std::string manifest_digest;  // a stored image's manifest; "" for host
};

// Adds the image's directories, files, links, binds, /dev and /proc masks to
// `spec`. `cache_dir` (may be empty) keeps the package-list digest between
// runs; `package_list` is dpkg's status file (a test may point elsewhere).
Result<ImageInfo> apply_host_image(SandboxSpec& spec, const std::string& cache_dir,
                                   const std::string& package_list = "/var/lib/dpkg/status");

}  // namespace airlock::sandbox
