// Moves a spooled upload into the content directory: a rename when both are
// on one file system, else a copy (content_dir on NFS, the spool local),
// synced before the spooled file is removed.
#pragma once

#include <string>

#include "base/result.h"

namespace airlock::service {

Status move_file(const std::string& from, const std::string& to);

}  // namespace airlock::service
