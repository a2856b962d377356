#include "image_helpers.h"

#include <linux/magic.h>
#include <sys/vfs.h>

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

bool shared_image_mounted(const std::string& hex) {
  struct statfs sf {};
  return ::statfs(("/run/airlock/images/" + hex).c_str(), &sf) == 0 &&
         static_cast<unsigned long>(sf.f_type) == EROFS_SUPER_MAGIC_V1;
}

std::string lock_holder_script(const std::string& path) {
  return "import fcntl, os, time\n"
         "fd = os.open(\"" + path + "\", os.O_RDONLY)\n"
         "fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)\n"
         "open(\"/workspace/ready\", \"w\").close()\n"
         "for _ in range(3000):\n"
         "    if os.path.exists(\"/workspace/done\"): break\n"
         "    time.sleep(0.01)\n"
         "print(\"holder done\")\n";
}

std::string lock_probe_script(const std::string& path) {
  return "import fcntl, os, struct\n"
         "fd = os.open(\"" + path + "\", os.O_RDONLY)\n"
         "os.read(fd, 4096)\n"
         "req = struct.pack(\"hhqqi4x\", fcntl.F_WRLCK, 0, 0, 0, 0)\n"
         "l_type = struct.unpack(\"hhqqi4x\", fcntl.fcntl(fd, fcntl.F_GETLK, req))[0]\n"
         "print(\"SEEN lock of another job\" if l_type != fcntl.F_UNLCK else \"UNSEEN no lock\")\n";
}

}  // namespace airlock::testing
