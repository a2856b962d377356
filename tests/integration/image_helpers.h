// The image store the tests use: $AIRLOCK_TEST_IMAGE_DIR, else build/images
// (beside the airlock binary), which scripts/test-setup/20-images.sh fills
// with images/minimal.toml.
#pragma once

#include <string>

namespace airlock::testing {

std::string test_image_dir();
// Whether `name` is in the test store (a test that needs it skips otherwise).
bool test_image_built(const std::string& name);

}  // namespace airlock::testing
