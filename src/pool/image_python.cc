#include "pool/image_python.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/python_embed.h"
#include "sys/file_io.h"

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

Result<std::string> image_python_version(int root) {
  char target[256];
  ssize_t n = ::readlinkat(root, "usr/bin/python3", target, sizeof(target) - 1);
  if (n < 0) return fail(ErrorKind::kNotFound, "the image has no usr/bin/python3 link");
  std::string name(target, static_cast<size_t>(n));
  name = name.substr(name.rfind('/') + 1);  // "python3.11" (relative or absolute link)
  if (name.rfind("python3.", 0) != 0 || !all_digits(name.substr(8)))
    return fail(ErrorKind::kNotFound, "the image's python3 is not CPython 3.X (" + name + ")");
  return name.substr(6);
}

Result<std::string> preloadable_python(int root) {
  auto found = image_python_version(root);
  if (!found) return found;
  const std::string& version = *found;
  std::string name = "python" + version;
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

Result<std::string> job_python_version(const ImageSource& image, const std::string& cache_dir) {
  if (image.is_host()) return sandbox::python_version("/usr/bin/python3");
  const std::string& digest = image.info.digest;
  if (digest.rfind("sha256:", 0) != 0 || digest.size() != 71) return fail("not an image digest: " + digest);
  const std::string dir = cache_dir + "/image-python";
  const std::string cached = dir + "/" + digest.substr(7);
  // "3.11\n", or "\n" for an image without CPython 3; anything else is not ours: read it again.
  if (auto seen = sys::read_file(cached, 64); seen && !seen->empty() && seen->back() == '\n') {
    std::string v = seen->substr(0, seen->size() - 1);
    if (v.empty()) return fail(ErrorKind::kNotFound, "the image has no CPython 3 (cached)");
    if (v.rfind("3.", 0) == 0 && all_digits(v.substr(2))) return v;
  }
  auto opened = open_image(image, cache_dir);
  if (!opened) return std::unexpected(opened.error());
  if (!opened->refusal.empty()) return fail(ErrorKind::kRefused, opened->refusal);
  auto version = image_python_version(opened->mount->fd());
  if (!version && version.error().kind != ErrorKind::kNotFound) return version;
  // As the verified cache (jobs/image_source.cc): only inside a cache directory that exists.
  struct stat cache_st {};
  if (::stat(cache_dir.c_str(), &cache_st) == 0 && sys::make_dirs(dir, 0700))
    (void)sys::write_file_atomic(cached, (version ? *version : "") + "\n", 0600);  // lost: read again
  return version;
}

Result<std::unique_ptr<sandbox::Zygote>> start_image_zygote(const std::string& airlock_binary,
                                                            sandbox::ZygoteOptions options,
                                                            const ImageSource& image,
                                                            const std::string& cache_dir) {
  if (image.is_host()) return fail("start_image_zygote: the host image has no image mount");  // a caller's bug
  auto opened = open_image(image, cache_dir);
  if (!opened) return std::unexpected(opened.error());
  if (!opened->refusal.empty()) return fail(ErrorKind::kRefused, opened->refusal);
  auto python = preloadable_python(opened->mount->fd());
  if (!python)
    return fail(python.error().kind,
                "image " + image.info.name + " cannot have preloaded sandboxes: " + python.error().what);
  options.image_root = opened->mount->fd();
  // The zygote attaches clones of the mount's /usr and /etc in its own mount
  // namespace; ours is closed with `opened`.
  auto zygote = sandbox::Zygote::start(airlock_binary, options);
  if (!zygote)
    return fail_with("the preloaded interpreter of image " + image.info.name + ": " + zygote.error().what,
                     zygote.error().err);
  return zygote;
}

}  // namespace airlock::jobs
