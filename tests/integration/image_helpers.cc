#include "image_helpers.h"

#include <linux/magic.h>
#include <sys/vfs.h>

#include <cstdlib>
#include <filesystem>

#include "base/sha256.h"
#include "run_helpers.h"

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

std::string make_tiny_store(const std::string& store, const std::string& work, const std::string& id) {
  namespace fs = std::filesystem;
  for (const char* d : {"blobs", "manifests", "names", "inuse", "tmp"}) fs::create_directories(store + "/" + d);
  fs::create_directories(work + "/root/usr/lib");
  write_text(work + "/root/usr/lib/os-release", "ID=" + id + "\n");
  std::string blob = work + "/tiny.erofs";
  std::string cmd = "mkfs.erofs -T0 --all-root " + blob + " " + work + "/root >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) return "";
  std::string hex = Sha256::of(read_text(blob));
  fs::rename(blob, store + "/blobs/" + hex + ".erofs");
  write_text(store + "/manifests/" + hex + ".json", "{\"name\":\"tiny\"}\n");
  write_text(store + "/names/tiny", "sha256:" + hex + "\n");
  return hex;
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
