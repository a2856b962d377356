// airlock zygote: the preloaded interpreter. Internal: started by airlock's
// warm pool with its control socket as fd 3, never by hand.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "sandbox/zygote.h"

using namespace airlock;

int zygote_command(const std::vector<std::string>& args) {
  sandbox::ZygoteOptions options;
  options.modules.clear();
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--python") options.python = args[i + 1];
    else if (args[i] == "--module") options.modules.push_back(args[i + 1]);
    else if (args[i] == "--image-root" && args[i + 1] == "4") options.image_root = 4;  // the image, from the pool
    else {
      std::fprintf(stderr, "airlock zygote: unknown option %s\n", args[i].c_str());
      return 125;
    }
  }
  if (::isatty(3) || ::fcntl(3, F_GETFD) < 0) {
    std::fprintf(stderr, "airlock zygote: internal command, started by airlock's warm pool\n");
    return 125;
  }
  if (options.image_root >= 0 && ::fcntl(options.image_root, F_GETFD) < 0) {
    std::fprintf(stderr, "airlock zygote: no image at fd 4\n");
    return 125;
  }
  return sandbox::run_zygote(3, options);
}
