// An image's manifest: what went into it (recipe digest, every package with
// its version and size, the environment) and how it was built (time, tool
// versions, the mirror, SOURCE_DATE_EPOCH). Pure; the store adds "digest"
// and "size" when it adds the image.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "images/recipe.h"

namespace airlock::images {

struct Package {
  std::string name;
  std::string version;
  std::string architecture;
  uint64_t installed_kib = 0;  // dpkg's Installed-Size
};

// The query `parse_dpkg_query` reads (dpkg-query -W -f=...).
inline constexpr std::string_view kDpkgQueryFormat =
    "${Package}\\t${Version}\\t${Architecture}\\t${Installed-Size}\\t${db:Status-Abbrev}\\n";

// Installed packages ("ii"), sorted by name; a clear error on a line that is
// not four tab-separated fields and a status.
[[nodiscard]] Result<std::vector<Package>> parse_dpkg_query(std::string_view text);

struct BuildFacts {
  std::string recipe_digest;
  std::vector<Package> packages;
  int64_t source_date_epoch = 0;
  std::string started_at;                    // UTC, ISO 8601
  double seconds = 0;                        // wall time of the whole build
  std::map<std::string, std::string> tools;  // tool -> version line
  std::string sources;                       // the apt sources the image came from
  std::string erofs_uuid;
};

[[nodiscard]] nlohmann::json make_manifest(const Recipe& recipe, const BuildFacts& facts);

}  // namespace airlock::images
