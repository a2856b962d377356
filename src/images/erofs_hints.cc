#include "images/erofs_hints.h"

namespace airlock::images {

const std::vector<std::string>& uncompressed_patterns() {
  // Debian's multiarch directory (x86_64-linux-gnu, aarch64-linux-gnu, ...);
  // shared libraries by their real file name (the .so.N names are links).
  static const std::vector<std::string> patterns = {
      // What every dynamic program maps first.
      "^/?usr/lib/[a-z0-9_]+-linux-gnu/(ld-linux[-a-z0-9_]*\\.so\\.[0-9]+|libc\\.so\\.6|libm\\.so\\.6)$",
      "^/?etc/ld\\.so\\.cache$",
      // The shells (`sh -c` jobs, scripts) and what bash needs.
      "^/?usr/bin/(dash|bash)$",
      "^/?usr/lib/[a-z0-9_]+-linux-gnu/libtinfo\\.so\\.6\\.[0-9.]+$",
      // CPython (python3 is a link to python3.X) and its DT_NEEDED libraries.
      "^/?usr/bin/python3\\.[0-9]+$",
      "^/?usr/lib/[a-z0-9_]+-linux-gnu/(libz\\.so\\.1\\.[0-9.]+|libexpat\\.so\\.1\\.[0-9.]+)$",
  };
  return patterns;
}

std::string erofs_compress_hints() {
  std::string text;
  for (const auto& p : uncompressed_patterns()) text += "0 " + p + "\n";
  return text;
}

}  // namespace airlock::images
