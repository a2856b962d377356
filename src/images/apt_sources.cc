#include "images/apt_sources.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "base/strings.h"
#include "images/tool_process.h"

namespace airlock::images {

Result<std::string> debian_sources(std::string_view indextargets, std::string_view suite) {
  // (uri, release) -> components, in the order apt lists them.
  std::vector<std::pair<std::string, std::string>> repos;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> components;
  for (const std::string& line : split(indextargets, '\n')) {
    std::vector<std::string> f = split(line, '\t');
    if (f.size() != 4 || f[2] != "Debian" || f[0].empty() || f[1].empty() || f[3].empty()) continue;
    if (f[0].find_first_of(" \"'") != std::string::npos || f[1].find(' ') != std::string::npos)
      continue;
    std::string uri = f[0];
    while (uri.size() > 1 && uri.back() == '/') uri.pop_back();
    auto key = std::make_pair(uri, f[1]);
    if (!components.count(key)) repos.push_back(key);
    components[key].insert(f[3]);
  }
  if (repos.empty())
    return fail(
        "the host's apt has no Debian repository (no 'Origin: Debian' in apt-get indextargets; "
        "run apt-get update, or add deb.debian.org to /etc/apt/sources.list.d)");
  std::string out;
  std::set<std::string> seen;
  for (const auto& key : repos) {
    const auto& [uri, release] = key;
    size_t dash = release.find('-');
    std::string target =
        std::string(suite) + (dash == std::string::npos ? "" : release.substr(dash));
    std::string line = "deb " + uri + " " + target;
    for (const std::string& c : components[key]) line += " " + c;
    if (seen.insert(line).second) out += line + "\n";
  }
  return out;
}

Result<std::string> host_debian_sources(std::string_view suite) {
  ToolRun run;
  run.argv = {"apt-get", "indextargets", "--format", std::string(kIndexTargetsFormat),
              "Created-By: Packages"};
  std::string output;
  run.on_stdout = [&](std::string_view line) { output += std::string(line) + "\n"; };
  auto exit = run_tool(run);
  if (!exit) return std::unexpected(exit.error());
  if (!exit->ok()) return fail("apt-get indextargets failed: " + exit->tail);
  return debian_sources(output, suite);
}

}  // namespace airlock::images
