#include "image_helpers.h"

#include <cstdlib>

#include "images/image_store.h"

namespace airlock::testing {

std::string test_image_dir() {
  if (const char* env = std::getenv("AIRLOCK_TEST_IMAGE_DIR"); env && *env) return env;
  std::string binary = AIRLOCK_BINARY;
  return binary.substr(0, binary.rfind('/')) + "/images";
}

bool test_image_built(const std::string& name) {
  return images::ImageStore(test_image_dir()).resolve({name, ""}).has_value();
}

}  // namespace airlock::testing
