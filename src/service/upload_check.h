// The input policy applied to one uploaded file, on the spooled body through
// a read-only mapping (never copied whole into memory): its size and its
// detected type. Used for POST /v1/files and for uploads into a session.
#pragma once

#include <cstdint>
#include <string>

#include "service/api_error.h"
#include "workspace/manifest.h"

namespace airlock::service {

struct CheckedUpload {
  uint64_t size = 0;
  std::string sha256, type;
};

// `shown_name` names the file in refusals (already in printable form).
ApiResult<CheckedUpload> check_upload(const std::string& shown_name, const std::string& spooled_path,
                                      uint64_t size, const workspace::InputPolicy& policy);

}  // namespace airlock::service
