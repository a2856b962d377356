#include "sandbox/stored_image.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "sandbox/base_layout.h"

namespace airlock::sandbox {
namespace {

enum class Kind { kMissing, kDir, kFile, kLink, kOther };

Kind kind_of(int root, const std::string& path) {
  struct stat st{};
  if (::fstatat(root, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) return Kind::kMissing;
  if (S_ISDIR(st.st_mode)) return Kind::kDir;
  if (S_ISREG(st.st_mode)) return Kind::kFile;
  if (S_ISLNK(st.st_mode)) return Kind::kLink;
  return Kind::kOther;
}

// The image's entry at `path` appears at the same place in the sandbox: a
// link is copied, a directory or a file is attached from the image.
Status import_entry(SandboxSpec& spec, const ImageMount& image, const std::string& path,
                    std::vector<UniqueFd>& trees) {
  switch (kind_of(image.fd(), path)) {
    case Kind::kLink: {
      char target[4096];
      ssize_t n = ::readlinkat(image.fd(), path.c_str(), target, sizeof(target) - 1);
      if (n < 0) return fail_errno("read the image's link " + path);
      spec.symlinks.push_back({std::string(target, static_cast<size_t>(n)), path});
      return {};
    }
    case Kind::kDir:
    case Kind::kFile: {
      auto tree = image.clone_subtree(path);
      if (!tree) return std::unexpected(tree.error());
      spec.attach.push_back({tree->get(), path, false, kind_of(image.fd(), path) == Kind::kFile});
      trees.push_back(std::move(*tree));
      return {};
    }
    case Kind::kMissing:
    case Kind::kOther: return {};
  }
  return {};
}

}  // namespace

Status apply_stored_image(SandboxSpec& spec, const ImageMount& image, std::vector<UniqueFd>& trees) {
  if (kind_of(image.fd(), "usr") != Kind::kDir) return fail("the image has no /usr directory");
  add_base_layout(spec);
  for (const char* name : kTopLevel)
    if (auto st = import_entry(spec, image, name, trees); !st) return st;
  if (auto st = import_entry(spec, image, "usr", trees); !st) return st;
  for (const char* rel : kEtcImports)
    if (auto st = import_entry(spec, image, std::string("etc/") + rel, trees); !st) return st;
  for (const char* rel : {"os-release", "localtime", "debian_version"})
    if (auto st = import_entry(spec, image, std::string("etc/") + rel, trees); !st) return st;
  return {};
}

}  // namespace airlock::sandbox
