// The image store the tests use: $AIRLOCK_TEST_IMAGE_DIR, else build/images
// (beside the airlock binary), which scripts/test-setup/20-images.sh fills
// with images/minimal.toml.
#pragma once

#include <string>

namespace airlock::testing {

std::string test_image_dir();
// Whether `name` is in the test store (a test that needs it skips otherwise).
bool test_image_built(const std::string& name);

// A store at `store` with one tiny image named `tiny` (a /usr with the file
// lib/os-release saying ID=`id`), made with mkfs.erofs in `work`: enough to be
// checked, mounted and refused, not to run a program. Returns its hex digest,
// "" when mkfs.erofs (erofs-utils) failed.
std::string make_tiny_store(const std::string& store, const std::string& work, const std::string& id);

// Whether the machine's shared mount of image `hex` (sandbox/shared_image.h)
// is mounted now.
bool shared_image_mounted(const std::string& hex);

// Two jobs at once on one file of an image (the isolation tests): the holder
// takes a shared lock on `path`, creates /workspace/ready, and holds the lock
// until /workspace/done appears (30 s at most); the probe opens and reads
// `path` and prints "SEEN lock of another job" when a write lock would
// conflict with someone's lock (F_GETLK), else "UNSEEN no lock". Python
// source; `path` is the test's own constant (put in a Python string literal).
std::string lock_holder_script(const std::string& path);
std::string lock_probe_script(const std::string& path);

}  // namespace airlock::testing
