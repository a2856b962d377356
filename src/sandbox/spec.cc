#include "base/check.h"
#include "sandbox/spec.h"

namespace airlock::sandbox {

std::string IdMap::uid_map(uid_t inside_uid) const {
  AIRLOCK_CHECK(host_base != 0 && inside_uid != 0);
  return "0 " + std::to_string(host_base) + " 1\n" + std::to_string(inside_uid) + " " +
         std::to_string(host_base + 1) + " 1\n";
}

std::string IdMap::gid_map(gid_t inside_gid) const { return uid_map(inside_gid); }

}  // namespace airlock::sandbox

