// A recipe: what an image is made of (images/<name>.toml). Pure parsing and
// the recipe's digest; building is image_build.h.
//
//   name = "minimal"
//   description = "..."             # not part of the digest
//   suite = "bookworm"              # Debian suite
//   variant = "minbase"             # mmdebstrap variant: minbase (default), essential, apt
//   packages = ["python3"]          # at least one; "name" or "name=version"
//   smoke = "python3 -c 'print(1)'" # /bin/sh -c, must exit 0 at build time
//   path_exclude = ["/usr/include/*"]  # dpkg leaves these paths out (globs)
//   [env]                           # given to every job in the image
//   LANG = "C.UTF-8"
//   [[files]]                       # extra files written into the root
//   path = "/etc/motd"
//   content = "hello\n"             # or: source = "files/motd" (relative to images/)
//   mode = "0644"                   # optional, octal string
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace airlock::images {

struct RecipeFile {
  std::string path;     // absolute, normalized, inside the image
  std::string content;  // the bytes (inline, or read from `source`)
  std::string source;   // "" when inline
  int mode = 0644;
};

struct Recipe {
  std::string name;
  std::string description;
  std::string suite;
  std::string variant = "minbase";
  std::vector<std::string> packages;  // sorted
  std::map<std::string, std::string> env;
  std::vector<RecipeFile> files;  // sorted by path
  std::string smoke;
  std::vector<std::string> path_exclude;  // dpkg --path-exclude globs, in order
};

// Reads an extra file's `source` (a path relative to the recipes directory).
using SourceReader = std::function<Result<std::string>(const std::string& relative)>;

// Parses a recipe. `label` names it in errors (usually the file name).
[[nodiscard]] Result<Recipe> parse_recipe(std::string_view text, std::string_view label,
                                          const SourceReader& read_source);
// Reads and parses a recipe file; `source` paths are resolved beside it.
[[nodiscard]] Result<Recipe> load_recipe(const std::string& path);

// How airlock turns a recipe into an image (mmdebstrap options, the cleanup,
// the .pyc treatment): part of the recipe digest, raised whenever a change
// there changes the image, so that a store's "already built" is not stale.
inline constexpr int kBuilderVersion = 2;

// The canonical content (sorted JSON without name and description, each extra
// file by its sha256) and its digest, "sha256:<hex>".
[[nodiscard]] std::string recipe_canonical(const Recipe& recipe);
[[nodiscard]] std::string recipe_digest(const Recipe& recipe);

}  // namespace airlock::images
