#include "images/recipe.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/nesting.h"
#include "base/sha256.h"
#include "base/toml_parse.h"
#include "base/unique_fd.h"
#include "images/image_ref.h"
#include "sys/file_io.h"

namespace airlock::images {
namespace {

constexpr size_t kRecipeLimit = 1 << 20;
constexpr size_t kFileLimit = 16 << 20;

const std::set<std::string> kTopKeys = {"name",  "description", "suite", "variant",     "packages",
                                        "smoke", "env",         "files", "path_exclude"};
const std::set<std::string> kFileKeys = {"path", "content", "source", "mode"};
const std::set<std::string> kVariants = {"minbase", "essential", "apt"};

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// Debian package names (policy 5.6.1), optionally "=version".
bool package_spec(std::string_view spec) {
  size_t eq = spec.find('=');
  std::string_view name = spec.substr(0, eq);
  if (name.size() < 2 || !lower_alnum(name[0])) return false;
  for (char c : name)
    if (!lower_alnum(c) && c != '+' && c != '-' && c != '.') return false;
  if (eq == std::string_view::npos) return true;
  std::string_view version = spec.substr(eq + 1);
  if (version.empty()) return false;
  for (char c : version)
    if (!lower_alnum(c) && !(c >= 'A' && c <= 'Z') && !std::strchr(".+~:-", c)) return false;
  return true;
}

bool env_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
      return false;
  return true;
}

// An absolute path with no empty, "." or ".." component, outside the
// kernel's and airlock's own mount points.
bool image_path(std::string_view path) {
  if (path.size() < 2 || path[0] != '/' || path.back() == '/') return false;
  for (size_t start = 1; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  for (std::string_view top : {"/proc", "/sys", "/dev", "/inputs", "/output", "/workspace", "/tmp"})
    if (path == top || path.starts_with(std::string(top) + "/")) return false;
  return path.find('\0') == std::string_view::npos;
}

// A relative path beneath the recipes directory.
bool source_path(std::string_view path) {
  return !path.empty() && path[0] != '/' && image_path("/x/" + std::string(path));
}

std::string shown(const std::string& text) { return "'" + text.substr(0, 80) + "'"; }

Result<std::string> string_at(const toml::value& v, const std::string& where) {
  if (!v.is_string()) return fail(where + " must be a string");
  return v.as_string().str;
}

}  // namespace

Result<Recipe> parse_recipe(std::string_view text, std::string_view label,
                            const SourceReader& read_source) {
  std::string at = "recipe " + std::string(label);
  if (!nesting_within(text, kMaxConfigDepth, NestingSyntax::kToml))
    return fail(at + ": nested deeper than " + std::to_string(kMaxConfigDepth) + " levels");
  toml::value root;
  try {
    std::istringstream in{std::string(text)};
    root = toml::parse(in, std::string(label));
  } catch (const std::exception& e) {
    return fail(at + ": not valid TOML: " + e.what());
  }
  if (!root.is_table()) return fail(at + ": not a TOML table");
  const auto& table = root.as_table();
  for (const auto& [key, value] : table)
    if (!kTopKeys.count(key))
      return fail(
          at + ": unknown key " + shown(key) +
          " (known: name, description, suite, variant, packages, smoke, env, files, path_exclude)");
  auto need = [&](const char* key) -> Result<std::string> {
    auto it = table.find(key);
    if (it == table.end()) return fail(at + ": '" + key + "' is required");
    return string_at(it->second, at + ": '" + std::string(key) + "'");
  };

  Recipe recipe;
  auto name = need("name");
  if (!name) return std::unexpected(name.error());
  if (auto st = check_image_name(*name); !st) return fail(at + ": " + st.error().what);
  if (*name == kHostImage) return fail(at + ": 'host' is reserved for the machine's own /usr");
  recipe.name = *name;

  auto suite = need("suite");
  if (!suite) return std::unexpected(suite.error());
  if (suite->empty() ||
      !std::all_of(suite->begin(), suite->end(), [](char c) { return c >= 'a' && c <= 'z'; }))
    return fail(at + ": 'suite' " + shown(*suite) + " is not a Debian suite name (e.g. bookworm)");
  recipe.suite = *suite;

  auto smoke = need("smoke");
  if (!smoke) return std::unexpected(smoke.error());
  if (smoke->find_first_not_of(" \t\n") == std::string::npos)
    return fail(at + ": 'smoke' is empty");
  if (smoke->find('\0') != std::string::npos) return fail(at + ": 'smoke' holds a NUL byte");
  recipe.smoke = *smoke;

  if (auto it = table.find("description"); it != table.end()) {
    auto d = string_at(it->second, at + ": 'description'");
    if (!d) return std::unexpected(d.error());
    recipe.description = *d;
  }
  if (auto it = table.find("variant"); it != table.end()) {
    auto v = string_at(it->second, at + ": 'variant'");
    if (!v) return std::unexpected(v.error());
    if (!kVariants.count(*v))
      return fail(at + ": 'variant' must be minbase, essential or apt, not " + shown(*v));
    recipe.variant = *v;
  }

  auto packages = table.find("packages");
  if (packages == table.end()) return fail(at + ": 'packages' is required");
  if (!packages->second.is_array())
    return fail(at + ": 'packages' must be an array of package names");
  for (const auto& p : packages->second.as_array()) {
    auto spec = string_at(p, at + ": every entry of 'packages'");
    if (!spec) return std::unexpected(spec.error());
    if (!package_spec(*spec))
      return fail(at + ": " + shown(*spec) + " is not a Debian package name");
    if (std::find(recipe.packages.begin(), recipe.packages.end(), *spec) != recipe.packages.end())
      return fail(at + ": package " + shown(*spec) + " is listed twice");
    recipe.packages.push_back(*spec);
  }
  if (recipe.packages.empty())
    return fail(at + ": 'packages' is empty (name at least one package)");
  std::sort(recipe.packages.begin(), recipe.packages.end());

  if (auto it = table.find("path_exclude"); it != table.end()) {
    if (!it->second.is_array())
      return fail(at + ": 'path_exclude' must be an array of paths (globs)");
    for (const auto& p : it->second.as_array()) {
      auto glob = string_at(p, at + ": every entry of 'path_exclude'");
      if (!glob) return std::unexpected(glob.error());
      if (glob->size() < 2 || (*glob)[0] != '/' ||
          glob->find_first_of(" \t\n,") != std::string::npos ||
          glob->find("..") != std::string::npos)
        return fail(at + ": path_exclude " + shown(*glob) +
                    " must be an absolute path or glob without spaces");
      recipe.path_exclude.push_back(*glob);
    }
  }
  if (auto it = table.find("env"); it != table.end()) {
    if (!it->second.is_table()) return fail(at + ": 'env' must be a table of NAME = \"value\"");
    for (const auto& [key, value] : it->second.as_table()) {
      if (!env_name(key))
        return fail(at + ": env name " + shown(key) + " is not [A-Za-z_][A-Za-z0-9_]*");
      auto v = string_at(value, at + ": env." + key);
      if (!v) return std::unexpected(v.error());
      if (v->find('\0') != std::string::npos)
        return fail(at + ": env." + key + " holds a NUL byte");
      recipe.env[key] = *v;
    }
  }

  if (auto it = table.find("files"); it != table.end()) {
    if (!it->second.is_array())
      return fail(at + ": 'files' must be an array of tables ([[files]])");
    for (const auto& f : it->second.as_array()) {
      if (!f.is_table()) return fail(at + ": every entry of 'files' must be a table");
      const auto& ft = f.as_table();
      for (const auto& [key, value] : ft)
        if (!kFileKeys.count(key))
          return fail(at + ": unknown key " + shown(key) +
                      " in [[files]] (known: path, content, source, mode)");
      RecipeFile file;
      auto path = ft.find("path");
      if (path == ft.end()) return fail(at + ": every [[files]] needs a 'path'");
      auto p = string_at(path->second, at + ": [[files]] 'path'");
      if (!p) return std::unexpected(p.error());
      if (!image_path(*p))
        return fail(at + ": file path " + shown(*p) +
                    " must be absolute and normalized, outside /proc, /sys, /dev, /tmp and the "
                    "job's directories");
      file.path = *p;
      std::string fat = at + ": file " + file.path;
      auto content = ft.find("content");
      auto source = ft.find("source");
      if ((content == ft.end()) == (source == ft.end()))
        return fail(fat + " needs exactly one of 'content' and 'source'");
      if (content != ft.end()) {
        auto c = string_at(content->second, fat + " 'content'");
        if (!c) return std::unexpected(c.error());
        file.content = *c;
      } else {
        auto s = string_at(source->second, fat + " 'source'");
        if (!s) return std::unexpected(s.error());
        if (!source_path(*s))
          return fail(fat + ": 'source' " + shown(*s) + " must be a relative path below images/");
        auto c = read_source(*s);
        if (!c) return fail(fat + ": " + c.error().message());
        file.source = *s;
        file.content = std::move(*c);
      }
      if (auto mode = ft.find("mode"); mode != ft.end()) {
        auto m = string_at(mode->second, fat + " 'mode' (an octal string like \"0755\")");
        if (!m) return std::unexpected(m.error());
        if (m->size() < 3 || m->size() > 4 ||
            m->find_first_not_of("01234567") != std::string::npos ||
            std::stoi(*m, nullptr, 8) > 0777)
          return fail(fat + ": 'mode' " + shown(*m) +
                      " is not an octal mode up to 0777 (no setuid bits)");
        file.mode = std::stoi(*m, nullptr, 8);
      }
      for (const RecipeFile& other : recipe.files)
        if (other.path == file.path) return fail(fat + " is listed twice");
      recipe.files.push_back(std::move(file));
    }
    std::sort(recipe.files.begin(), recipe.files.end(),
              [](const RecipeFile& a, const RecipeFile& b) { return a.path < b.path; });
  }
  return recipe;
}

Result<Recipe> load_recipe(const std::string& path) {
  auto text = sys::read_file(path, kRecipeLimit);
  if (!text) return fail_with("read recipe " + path, text.error().err);
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  SourceReader reader = [&](const std::string& relative) -> Result<std::string> {
    std::string full = dir + "/" + relative;
    UniqueFd fd(::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) return fail_errno("open " + full);
    struct stat st {};
    if (::fstat(fd.get(), &st) < 0) return fail_errno("stat " + full);
    if (!S_ISREG(st.st_mode)) return fail(full + " is not a regular file");
    return sys::read_all(fd.get(), kFileLimit);
  };
  std::string label = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  return parse_recipe(*text, label, reader);
}

std::string recipe_canonical(const Recipe& recipe) {
  nlohmann::json files = nlohmann::json::array();
  for (const RecipeFile& f : recipe.files)
    files.push_back({{"path", f.path}, {"mode", f.mode}, {"sha256", Sha256::of(f.content)}});
  nlohmann::json canonical = {
      {"format", 1},
      {"builder", kBuilderVersion},
      {"suite", recipe.suite},
      {"variant", recipe.variant},
      {"packages", recipe.packages},
      {"env", recipe.env},
      {"files", files},
      {"smoke", recipe.smoke},
      {"path_exclude", recipe.path_exclude},
  };
  return canonical.dump();
}

std::string recipe_digest(const Recipe& recipe) {
  return "sha256:" + Sha256::of(recipe_canonical(recipe));
}

}  // namespace airlock::images
