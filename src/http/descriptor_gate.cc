#include "http/descriptor_gate.h"

#include <dirent.h>

namespace airlock::api {

uint64_t count_open_descriptors() {
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return 0;
  uint64_t n = 0;
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n > 0 ? n - 1 : 0;  // the directory's own
}

bool DescriptorGate::admit(std::chrono::steady_clock::time_point now) {
  ++since_;
  uint64_t estimate = counted_ + since_;
  if (!ever_ || estimate + reserve_ > limit_ || now - at_ >= kRecount) {
    counted_ = count_();
    since_ = 0;
    at_ = now;
    ever_ = true;
    estimate = counted_;
  }
  if (estimate + reserve_ <= limit_) return true;
  ++refused_;
  return false;
}

}  // namespace airlock::api
