#include "images/manifest.h"

#include <algorithm>
#include <charconv>

#include "base/strings.h"
#include "images/erofs_hints.h"

namespace airlock::images {

Result<std::vector<Package>> parse_dpkg_query(std::string_view text) {
  std::vector<Package> packages;
  int number = 0;
  for (const std::string& line : split(text, '\n')) {
    ++number;
    if (line.empty()) continue;
    std::vector<std::string> f = split(line, '\t');
    if (f.size() != 5 || f[0].empty() || f[1].empty())
      return fail("dpkg-query line " + std::to_string(number) +
                  " is not 'package, version, architecture, size, status'");
    if (f[4].rfind("ii", 0) != 0) continue;  // removed, config-files, half-installed
    Package p{f[0], f[1], f[2], 0};
    if (!f[3].empty()) {
      auto [ptr, ec] = std::from_chars(f[3].data(), f[3].data() + f[3].size(), p.installed_kib);
      if (ec != std::errc() || ptr != f[3].data() + f[3].size())
        return fail("dpkg-query line " + std::to_string(number) + ": size '" + f[3] +
                    "' is not a number");
    }
    packages.push_back(std::move(p));
  }
  std::sort(packages.begin(), packages.end(),
            [](const Package& a, const Package& b) { return a.name < b.name; });
  return packages;
}

nlohmann::json make_manifest(const Recipe& recipe, const BuildFacts& facts) {
  nlohmann::json packages = nlohmann::json::array();
  uint64_t total = 0;
  for (const Package& p : facts.packages) {
    packages.push_back({{"name", p.name},
                        {"version", p.version},
                        {"architecture", p.architecture},
                        {"installed_size_kib", p.installed_kib}});
    total += p.installed_kib;
  }
  nlohmann::json files = nlohmann::json::array();
  for (const RecipeFile& f : recipe.files)
    files.push_back({{"path", f.path}, {"mode", f.mode}, {"bytes", f.content.size()}});
  return {
      {"format", 1},
      {"name", recipe.name},
      {"description", recipe.description},
      {"recipe_digest", facts.recipe_digest},
      {"recipe", nlohmann::json::parse(recipe_canonical(recipe))},
      {"suite", recipe.suite},
      {"variant", recipe.variant},
      {"env", recipe.env},
      {"files", files},
      {"filesystem",
       {{"type", "erofs"},
        {"compression", "lz4hc"},
        {"uncompressed", uncompressed_patterns()},  // images/erofs_hints.h
        {"uuid", facts.erofs_uuid}}},
      {"packages", packages},
      {"package_count", facts.packages.size()},
      {"installed_size_kib", total},
      {"build",
       {{"started_at", facts.started_at},
        {"seconds", facts.seconds},
        {"source_date_epoch", facts.source_date_epoch},
        {"sources", facts.sources},
        {"tools", facts.tools}}},
  };
}

}  // namespace airlock::images
