// airlock image build | list | inspect | rm | gc | release: the image store and the
// machine's shared mounts of its images (docs/images.md).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/terminal_text.h"
#include "cmd/airlock/terminal_out.h"
#include "images/image_build.h"
#include "images/image_ref.h"
#include "images/image_store.h"
#include "jobs/state_dir.h"
#include "sandbox/shared_image.h"

namespace {

using airlock::images::ImageStore;
using airlock::images::StoredImage;

const char* const kUsage =
    "usage: airlock image COMMAND [OPTIONS]\n"
    "  build RECIPE [--force] [--source-date-epoch N]   build images/NAME.toml (or a recipe file) "
    "into the store\n"
    "  list [--all]                                    the store's images (--all: also unnamed "
    "blobs)\n"
    "  inspect NAME[@sha256:...] [--verify]            an image's manifest (--verify: hash the "
    "blob)\n"
    "  rm NAME                                         remove a name (and its image unless another "
    "name has it)\n"
    "  gc                                              remove images no name points to and nobody "
    "uses\n"
    "  release                                         unmount the machine's shared mounts of images\n"
    "                                                  (the next job on an image mounts it again)\n"
    "options for every command:\n"
    "  --image-dir DIR    the store (default $AIRLOCK_IMAGE_DIR, else STATE_DIR/images)\n"
    "  --state-dir DIR    (default $AIRLOCK_STATE_DIR, else /var/lib/airlock)\n"
    "  --json             machine-readable output\n";

std::atomic<bool> g_interrupted{false};
void on_signal(int) { g_interrupted.store(true); }

struct Args {
  std::string command;
  std::vector<std::string> positional;
  std::string image_dir, state_dir;
  bool json = false, all = false, force = false, verify = false;
  long long source_date_epoch = -1;
};

int usage_error(const std::string& message) {
  std::fprintf(stderr, "airlock image: %s\n%s", message.c_str(), kUsage);
  return 125;
}

int error(const std::string& message) {
  airlock::cli::write_shown(2, "airlock image: " + message + "\n");
  return 1;
}

std::string human_size(uint64_t bytes) {
  char buf[32];
  if (bytes >= (1ull << 30))
    std::snprintf(buf, sizeof(buf), "%.2f GiB", bytes / double(1ull << 30));
  else if (bytes >= (1ull << 20))
    std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / double(1ull << 20));
  else
    std::snprintf(buf, sizeof(buf), "%.1f KiB", bytes / 1024.0);
  return buf;
}

std::string short_digest(const std::string& digest) { return digest.substr(0, 7 + 12); }

nlohmann::json image_json(const StoredImage& image) {
  return {{"name", image.name.empty() ? nlohmann::json(nullptr) : nlohmann::json(image.name)},
          {"digest", image.digest},
          {"manifest_digest", image.manifest_digest},
          {"size", image.size},
          {"blob", image.blob_path}};
}

nlohmann::json manifest_of(const ImageStore& store, const StoredImage& image) {
  auto text = store.read_manifest(image);
  if (!text) return nlohmann::json::object();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

void print(const std::string& text) { airlock::cli::write_shown(1, text); }

int build(const ImageStore& store, const Args& args) {
  if (args.positional.size() != 1) return usage_error("build takes one RECIPE");
  std::string recipe = args.positional[0];
  // A bare name means images/NAME.toml of the current directory (the repository).
  if (recipe.find('/') == std::string::npos && !recipe.ends_with(".toml"))
    recipe = "images/" + recipe + ".toml";
  airlock::images::BuildOptions options;
  options.recipe_path = recipe;
  options.force = args.force;
  options.interrupted = &g_interrupted;
  if (args.source_date_epoch >= 0) {
    options.source_date_epoch = args.source_date_epoch;
  } else if (const char* env = std::getenv("SOURCE_DATE_EPOCH"); env && *env) {
    char* end = nullptr;
    long long v = std::strtoll(env, &end, 10);
    if (*end || v < 0) return usage_error("SOURCE_DATE_EPOCH is not a number of seconds");
    options.source_date_epoch = v;
  }
  bool tty = ::isatty(2);
  bool status_line = false;
  options.phase = [&](std::string_view line) {
    if (status_line) std::fputs("\r\x1b[K", stderr);
    status_line = false;
    airlock::cli::write_shown(2, std::string(line) + "\n");
  };
  // A tool's own output: one line that keeps changing, on a terminal only.
  options.detail = [&](std::string_view line) {
    if (!tty) return;
    std::string shown = airlock::quoted_text(line.substr(0, 100));
    std::fprintf(stderr, "\r\x1b[K      %s", shown.c_str());
    std::fflush(stderr);
    status_line = true;
  };

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  auto result = airlock::images::build_image(store, options);
  if (status_line) std::fputs("\r\x1b[K", stderr);
  if (!result) {
    error("build failed: " + result.error().message());
    return g_interrupted.load() ? 130 : 1;
  }
  if (args.json) {
    nlohmann::json j = image_json(result->image);
    j["recipe_digest"] = result->recipe_digest;
    j["reused"] = result->reused;
    j["seconds"] = result->seconds;
    j["tree_bytes"] = result->tree_bytes;
    print(j.dump(2) + "\n");
  } else if (result->reused) {
    print(result->image.name + " " + result->image.digest + " is already built from recipe " +
          result->recipe_digest + " (--force builds again)\n");
  } else {
    char line[256];
    std::snprintf(line, sizeof(line), "%s %s %s (tree %s) built in %.0f s\n",
                  result->image.name.c_str(), result->image.digest.c_str(),
                  human_size(result->image.size).c_str(), human_size(result->tree_bytes).c_str(),
                  result->seconds);
    print(line);
  }
  return 0;
}

int list(const ImageStore& store, const Args& args) {
  if (!args.positional.empty()) return usage_error("list takes no arguments");
  auto images = store.list();
  if (!images) return error(images.error().message());
  std::vector<StoredImage> rows = *images;
  if (args.all) {
    auto unnamed = store.unnamed();
    if (!unnamed) return error(unnamed.error().message());
    rows.insert(rows.end(), unnamed->begin(), unnamed->end());
  }
  if (args.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const StoredImage& image : rows) {
      nlohmann::json j = image_json(image);
      nlohmann::json m = manifest_of(store, image);
      j["recipe_digest"] = m.value("recipe_digest", "");
      j["package_count"] = m.value("package_count", 0);
      j["built_at"] = m.contains("build") ? m["build"].value("started_at", "") : "";
      out.push_back(std::move(j));
    }
    print(out.dump(2) + "\n");
    return 0;
  }
  char line[512];
  std::snprintf(line, sizeof(line), "%-20s %-20s %10s %8s  %s\n", "NAME", "DIGEST", "SIZE",
                "PACKAGES", "BUILT");
  print(line);
  for (const StoredImage& image : rows) {
    nlohmann::json m = manifest_of(store, image);
    std::string built = m.contains("build") ? m["build"].value("started_at", "") : "";
    std::snprintf(line, sizeof(line), "%-20s %-20s %10s %8d  %s\n",
                  image.name.empty() ? "(no name)" : image.name.c_str(),
                  short_digest(image.digest).c_str(), human_size(image.size).c_str(),
                  m.value("package_count", 0), built.c_str());
    print(line);
  }
  return 0;
}

int inspect(const ImageStore& store, const Args& args) {
  if (args.positional.size() != 1) return usage_error("inspect takes one NAME[@sha256:...]");
  auto ref = airlock::images::parse_image_ref(args.positional[0]);
  if (!ref) return error(ref.error().message());
  auto image = store.resolve(*ref);
  if (!image) return error(image.error().message());
  if (args.verify)
    if (auto st = store.verify(*image); !st) return error(st.error().message());
  nlohmann::json m = manifest_of(store, *image);
  if (args.json) {
    nlohmann::json j = image_json(*image);
    j["verified"] = args.verify;
    j["manifest"] = m;
    print(airlock::cli::json_shown(1, j) + "\n");
    return 0;
  }
  nlohmann::json build = m.value("build", nlohmann::json::object());
  std::string out;
  out += "name             " + image->name + "\n";
  out += "digest           " + image->digest + (args.verify ? " (verified)" : "") + "\n";
  out += "manifest digest  " + image->manifest_digest + "\n";
  out += "size             " + human_size(image->size) + " (" + std::to_string(image->size) +
         " bytes)\n";
  out += "recipe digest    " + m.value("recipe_digest", "") + "\n";
  out += "suite            " + m.value("suite", "") + " (" + m.value("variant", "") + ")\n";
  out += "built            " + build.value("started_at", "") + " in " +
         std::to_string(static_cast<int>(build.value("seconds", 0.0))) + " s, SOURCE_DATE_EPOCH " +
         std::to_string(build.value("source_date_epoch", 0)) + "\n";
  nlohmann::json tools = build.value("tools", nlohmann::json::object());
  nlohmann::json env = m.value("env", nlohmann::json::object());
  nlohmann::json packages = m.value("packages", nlohmann::json::array());
  for (const auto& [tool, version] : tools.items())
    out += "tool             " + tool + " " + version.get<std::string>() + "\n";
  for (const auto& [name, value] : env.items())
    out += "env              " + name + "=" + value.get<std::string>() + "\n";
  out += "packages         " + std::to_string(m.value("package_count", 0)) + ", " +
         human_size(m.value("installed_size_kib", uint64_t{0}) * 1024) + " installed\n";
  for (const auto& p : packages) {
    char line[256];
    std::snprintf(line, sizeof(line), "  %-36s %-32s %8llu KiB\n", p.value("name", "").c_str(),
                  p.value("version", "").c_str(),
                  static_cast<unsigned long long>(p.value("installed_size_kib", 0)));
    out += line;
  }
  print(out);
  return 0;
}

int rm(const ImageStore& store, const Args& args) {
  if (args.positional.size() != 1) return usage_error("rm takes one NAME");
  auto report = store.remove(args.positional[0]);
  if (!report) return error(report.error().message());
  // The shared mount holds the removed file open: its space is freed once
  // the sandboxes still running on it end.
  if (report->blob_removed)
    if (auto st = airlock::sandbox::release_shared_image(report->image.digest.substr(7)); !st)
      return error("removed, but its shared mount stays: " + st.error().message());
  if (args.json) {
    nlohmann::json j = image_json(report->image);
    j["blob_removed"] = report->blob_removed;
    print(j.dump(2) + "\n");
  } else {
    print("removed " + report->image.name + " (" + report->image.digest + ")" +
          (report->blob_removed ? "" : "; the image stays: another name points to it") + "\n");
  }
  return 0;
}

int gc(const ImageStore& store, const Args& args) {
  if (!args.positional.empty()) return usage_error("gc takes no arguments");
  auto report = store.gc();
  if (!report) return error(report.error().message());
  for (const StoredImage& image : report->removed)
    if (auto st = airlock::sandbox::release_shared_image(image.digest.substr(7)); !st)
      return error("removed " + image.digest + ", but its shared mount stays: " + st.error().message());
  if (args.json) {
    nlohmann::json removed = nlohmann::json::array(), kept = nlohmann::json::array();
    for (const StoredImage& image : report->removed) removed.push_back(image_json(image));
    for (const auto& k : report->kept) kept.push_back({{"digest", k.digest}, {"reason", k.reason}});
    print(nlohmann::json{{"removed", removed},
                         {"kept", kept},
                         {"freed_bytes", report->freed_bytes},
                         {"stale_builds", report->stale_builds}}
              .dump(2) +
          "\n");
    return 0;
  }
  std::string out;
  for (const StoredImage& image : report->removed)
    out += "removed " + image.digest + " (" + human_size(image.size) + ")\n";
  for (const auto& k : report->kept) out += "kept    " + k.digest + ": in use, " + k.reason + "\n";
  out += std::to_string(report->removed.size()) + " image(s) removed, " +
         human_size(report->freed_bytes) + " freed, " + std::to_string(report->stale_builds) +
         " leftover build(s) removed\n";
  print(out);
  return 0;
}

int release(const Args& args) {
  if (!args.positional.empty()) return usage_error("release takes no arguments");
  auto count = airlock::sandbox::release_shared_images();
  if (!count) return error(count.error().message());
  if (args.json)
    print(nlohmann::json{{"released", *count}}.dump(2) + "\n");
  else
    print(std::to_string(*count) + " shared image mount(s) released\n");
  return 0;
}

}  // namespace

int image_command(const std::vector<std::string>& argv) {
  if (argv.empty()) return usage_error("a command is needed");
  if (argv[0] == "--help" || argv[0] == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  Args args;
  args.command = argv[0];
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argv.size()) return false;
      out = argv[++i];
      return true;
    };
    std::string number;
    if (a == "--json")
      args.json = true;
    else if (a == "--all" && args.command == "list")
      args.all = true;
    else if (a == "--force" && args.command == "build")
      args.force = true;
    else if (a == "--verify" && args.command == "inspect")
      args.verify = true;
    else if (a == "--image-dir") {
      if (!value(args.image_dir)) return usage_error("--image-dir needs a directory");
    } else if (a == "--state-dir") {
      if (!value(args.state_dir)) return usage_error("--state-dir needs a directory");
    } else if (a == "--source-date-epoch" && args.command == "build") {
      char* end = nullptr;
      if (!value(number) || (args.source_date_epoch = std::strtoll(number.c_str(), &end, 10)) < 0 ||
          *end)
        return usage_error("--source-date-epoch needs a number of seconds");
    } else if (a.starts_with("--")) {
      return usage_error("unknown option " + a + " for " + args.command);
    } else {
      args.positional.push_back(a);
    }
  }
  if (args.command == "release") return release(args);  // machine-wide: no store
  std::string state_dir =
      args.state_dir.empty() ? airlock::jobs::default_state_dir() : args.state_dir;
  ImageStore store(ImageStore::choose_root(args.image_dir, state_dir));
  if (args.command == "build") return build(store, args);
  if (args.command == "list") return list(store, args);
  if (args.command == "inspect") return inspect(store, args);
  if (args.command == "rm") return rm(store, args);
  if (args.command == "gc") return gc(store, args);
  return usage_error("unknown command '" + args.command + "'");
}
