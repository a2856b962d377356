#include "pool/image_python.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>


namespace airlock::jobs {
namespace {

#if defined(__x86_64__)
constexpr const char* kTriplet = "x86_64-linux-gnu";
#elif defined(__aarch64__)
constexpr const char* kTriplet = "aarch64-linux-gnu";
#else
constexpr const char* kTriplet = "";
#endif

bool is_regular(int root, const std::string& path) {
  struct stat st {};
  // The library is a file in Debian (libpython3.11.so.1.0); no link is followed.
  return ::fstatat(root, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

Result<std::string> preloadable_python(int root) {
  char target[256];
  ssize_t n = ::readlinkat(root, "usr/bin/python3", target, sizeof(target) - 1);
  if (n < 0) return fail(ErrorKind::kNotFound, "the image has no usr/bin/python3 link");
  std::string name(target, static_cast<size_t>(n));
  name = name.substr(name.rfind('/') + 1);  // "python3.11" (relative or absolute link)
  if (name.rfind("python3.", 0) != 0 || !all_digits(name.substr(8)))
    return fail(ErrorKind::kNotFound, "the image's python3 is not CPython 3.X (" + name + ")");
  std::string version = name.substr(6);
  if (!is_regular(root, "usr/lib/python" + version + "/os.py"))
    return fail(ErrorKind::kNotFound, "the image has no standard library for " + name);
  std::string library = "libpython" + version + ".so.1.0";
  if (!is_regular(root, std::string("usr/lib/") + kTriplet + "/" + library) &&
      !is_regular(root, "usr/lib/" + library))
    return fail(ErrorKind::kNotFound,
                "the image has no " + library + " (Debian package libpython" + version + ")");
  if (!is_regular(root, "usr/lib/python3/dist-packages/pandas/__init__.py"))
    return fail(ErrorKind::kNotFound, "the image has no pandas (python3-pandas)");
  return version;
}

Result<std::string> preloadable_python(const ImageSource& image, const std::string& cache_dir) {
  if (image.is_host()) return fail("preloadable_python: the host image has no image mount");  // a caller's bug
  auto opened = open_image(image, cache_dir);
  if (!opened) return std::unexpected(opened.error());
  if (!opened->refusal.empty()) return fail(ErrorKind::kRefused, opened->refusal);
  return preloadable_python(opened->mount->fd());
}

}  // namespace airlock::jobs
