// A stored image (a read-only erofs file) as a sandbox's system: the base
// layout (sandbox/base_layout.h) on a tmpfs root, the image's /usr attached
// from this sandbox's own mount of the image, the image's top-level links
// (bin -> usr/bin...) and its public /etc files (kEtcImports, os-release,
// localtime). Nothing is bound from a host path but the /dev nodes, so the
// sandbox's mountinfo shows paths inside the image only.
#pragma once

#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "sandbox/image_mount.h"
#include "sandbox/spec.h"

namespace airlock::sandbox {

// Adds the layout to `spec`. The detached mounts it attaches are appended
// to `trees`, which must outlive the launch (the child attaches them).
Status apply_stored_image(SandboxSpec& spec, const ImageMount& image, std::vector<UniqueFd>& trees);

}  // namespace airlock::sandbox
