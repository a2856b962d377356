#include "images/image_build.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>

#include "base/sha256.h"
#include "base/strings.h"
#include "images/apt_sources.h"
#include "images/build_dir.h"
#include "images/erofs_hints.h"
#include "images/manifest.h"
#include "images/recipe.h"
#include "images/tool_process.h"
#include "sys/file_io.h"
#include "sys/remove_tree.h"
#include "sys/syscalls.h"

namespace airlock::images {
namespace {

constexpr const char* kPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr int kPhases = 6;

// Documentation, manual pages and translations are left out of every image
// (the licences stay).
const char* const kDpkgExcludes[] = {
    "path-exclude=/usr/share/man/*",    "path-exclude=/usr/share/info/*",
    "path-exclude=/usr/share/doc/*",    "path-include=/usr/share/doc/*/copyright",
    "path-exclude=/usr/share/locale/*", "path-exclude=/usr/share/lintian/*",
};

// What would differ between two builds of one recipe, or is the build
// host's: logs, caches keyed by inode and time, backups, the host's
// resolver and hostname (mmdebstrap copies them in), device nodes (the
// sandbox makes its own /dev).
const char* const kRemoved[] = {
    "etc/resolv.conf",
    "etc/hostname",
    "etc/machine-id",
    "var/lib/dbus/machine-id",
    "var/cache/ldconfig/aux-cache",
    "var/cache/debconf/config.dat-old",
    "var/cache/debconf/templates.dat-old",
    "var/cache/debconf/passwords.dat-old",
    "var/lib/dpkg/status-old",
    "var/lib/dpkg/diversions-old",
    "var/lib/dpkg/statoverride-old",
    "var/cache/apt/pkgcache.bin",
    "var/cache/apt/srcpkgcache.bin",
    "etc/passwd-",
    "etc/group-",
    "etc/shadow-",
    "etc/gshadow-",
    "etc/subuid-",
    "etc/subgid-",
};
const char* const kEmptied[] = {
    "dev", "var/log", "var/lib/apt/lists", "var/cache/apt/archives", "tmp", "var/tmp", "run"};

// The smoke command: a read-only view of the root, fresh /proc, /tmp and a
// minimal /dev, no network device but a down loopback, its own pid, ipc and
// uts namespaces, as nobody (65534), with only the recipe's environment.
constexpr const char* kSmokeScript = R"SH(set -e
root="$1"; shift
mount --make-rprivate /
mount --bind "$root" "$root"
mount -o remount,bind,ro,nosuid,nodev "$root"
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
mount -t tmpfs -o nosuid,nodev,size=1g,mode=1777 tmpfs "$root/tmp"
mount -t tmpfs -o nosuid,noexec,size=1m,mode=755 tmpfs "$root/dev"
for d in null zero full random urandom tty; do
  : > "$root/dev/$d"; mount --bind "/dev/$d" "$root/dev/$d"
done
mkdir -m 1777 "$root/dev/shm"
ln -s /proc/self/fd "$root/dev/fd"
hostname airlock-smoke
exec env -i "$@" chroot --userspec=65534:65534 --groups=65534 "$root" /bin/sh -c "$AIRLOCK_SMOKE"
)SH";

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string join(const std::vector<std::string>& items, char sep) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : std::string(1, sep)) + i;
  return out;
}

struct Builder {
  const ImageStore& store;
  const BuildOptions& options;
  Recipe recipe;
  std::string digest;
  std::string dir, root;
  std::vector<std::string> errors;  // E: lines of the tool that runs
  int phase_number = 0;

  void say(std::string_view line) const {
    if (options.phase) options.phase(line);
  }
  void phase(const std::string& what) {
    say("[" + std::to_string(++phase_number) + "/" + std::to_string(kPhases) + "] " + what);
  }
  bool interrupted() const { return options.interrupted && options.interrupted->load(); }
  Status check_interrupt() const {
    if (interrupted()) return fail("interrupted: nothing was added to the store");
    return {};
  }

  std::vector<std::string> tool_env() const {
    return {kPath, "LANG=C.UTF-8", "DEBIAN_FRONTEND=noninteractive",
            "SOURCE_DATE_EPOCH=" + std::to_string(options.source_date_epoch), "TMPDIR=" + dir};
  }

  // Runs a tool; tool messages (I:, W:, E:) are phase lines, the rest detail.
  Result<ToolExit> run(std::vector<std::string> argv, bool messages_are_phases) {
    ToolRun tool;
    tool.argv = std::move(argv);
    tool.env = tool_env();
    tool.interrupted = options.interrupted;
    errors.clear();
    tool.on_stdout = [&](std::string_view line) {
      if (line.starts_with("E: ")) errors.emplace_back(line);
      bool message = line.starts_with("I: ") || line.starts_with("W: ") || line.starts_with("E: ");
      if (messages_are_phases && message)
        say(std::string("    ") + std::string(line));
      else if (options.detail)
        options.detail(line);
    };
    return run_tool(tool);
  }

  Status failed(const std::string& what, const ToolExit& exit) const {
    if (exit.interrupted)
      return fail("interrupted during " + what + ": nothing was added to the store");
    std::string message = what + " failed (" +
                          (exit.signal ? "killed by signal " + std::to_string(exit.signal)
                                       : "exit status " + std::to_string(exit.code)) +
                          ")";
    if (!errors.empty()) {
      message += "; apt said:";
      for (const std::string& e : errors) message += "\n  " + e;
    } else if (!exit.tail.empty()) {
      message += "; its last lines:\n" + exit.tail;
    }
    return fail(message);
  }

  Status bootstrap(const std::string& sources) {
    std::string sources_file = dir + "/sources.list";
    if (auto st = sys::write_file_atomic(sources_file, sources); !st) return st;
    // In a mount namespace of its own: whatever mmdebstrap mounts in the root
    // (/proc, /sys, /dev) goes away with it, even when it is killed.
    std::vector<std::string> argv = {
        "unshare", "--mount", "--propagation", "private", "--", "mmdebstrap", "--mode=root",
        "--format=directory", "--variant=" + recipe.variant, "--verbose",
        "--aptopt=Acquire::Retries \"3\"",
        // A recipe lists what it needs; Recommends would add what it did not ask for.
        "--aptopt=APT::Install-Recommends \"false\"", "--include=" + join(recipe.packages, ',')};
    for (const char* opt : kDpkgExcludes) argv.push_back(std::string("--dpkgopt=") + opt);
    for (const std::string& glob : recipe.path_exclude)
      argv.push_back("--dpkgopt=path-exclude=" + glob);
    argv.insert(argv.end(), {recipe.suite, root, sources_file});
    auto exit = run(argv, true);
    if (!exit) return std::unexpected(exit.error());
    if (!exit->ok()) return failed("mmdebstrap", *exit);
    return {};
  }

  Status write_files() {
    UniqueFd rootfd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!rootfd) return fail_errno("open " + root);
    for (const RecipeFile& f : recipe.files) {
      // Each parent resolved inside the root (a /bin -> usr/bin link stays in it).
      std::string parent = f.path.substr(0, f.path.rfind('/'));
      std::string name = f.path.substr(f.path.rfind('/') + 1);
      open_how how{};
      how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
      how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
      std::string prefix;
      for (size_t pos = 1; pos <= parent.size(); ++pos) {
        if (pos < parent.size() && parent[pos] != '/') continue;
        prefix = parent.substr(0, pos);
        auto d = sys::openat2(rootfd.get(), prefix, how);
        if (d) continue;
        if (d.error().err != ENOENT)
          return fail_with("open " + prefix + " in the image", d.error().err);
        std::string up = prefix.substr(0, prefix.rfind('/'));
        auto updir = sys::openat2(rootfd.get(), up.empty() ? "/" : up, how);
        if (!updir) return fail_with("open " + up + " in the image", updir.error().err);
        std::string leaf = prefix.substr(prefix.rfind('/') + 1);
        if (::mkdirat(updir->get(), leaf.c_str(), 0755) < 0 && errno != EEXIST)
          return fail_errno("create " + prefix + " in the image");
      }
      auto dirfd = sys::openat2(rootfd.get(), parent.empty() ? "/" : parent, how);
      if (!dirfd) return fail_with("open " + parent + " in the image", dirfd.error().err);
      ::unlinkat(dirfd->get(), name.c_str(), 0);
      UniqueFd fd(::openat(dirfd->get(), name.c_str(),
                           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (!fd) return fail_errno("create " + f.path + " in the image");
      if (auto st = sys::write_all(fd.get(), f.content); !st)
        return fail_with("write " + f.path, st.error().err);
      if (::fchmod(fd.get(), static_cast<mode_t>(f.mode)) < 0) return fail_errno("chmod " + f.path);
    }
    return {};
  }

  Status sanitize() {
    for (const char* rel : kRemoved) {
      std::string path = root + "/" + rel;
      if (::unlink(path.c_str()) < 0 && errno != ENOENT) return fail_errno("remove " + path);
    }
    for (const char* rel : kEmptied) {
      std::string path = root + "/" + rel;
      UniqueFd d(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!d) continue;
      if (auto st = sys::empty_dir(d.get()); !st)
        return fail_with("empty " + path + ": " + st.error().what, st.error().err);
    }
    return unchecked_pyc();
  }

  // With SOURCE_DATE_EPOCH set, Python compiles "checked-hash" .pyc files
  // (their validity is the source's hash, not its mtime): every import then
  // reads and hashes the .py again. In a read-only image a source never
  // changes, so the flag that asks for the check is cleared ("unchecked-hash",
  // PEP 552): same bytes otherwise, and imports read only the .pyc.
  Status unchecked_pyc() {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(root + "/usr", ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->path().extension() != ".pyc" || !it->is_regular_file(ec) || it->is_symlink(ec))
        continue;
      UniqueFd fd(::open(it->path().c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
      if (!fd) return fail_errno("open " + it->path().string());
      uint32_t flags = 0;
      if (::pread(fd.get(), &flags, sizeof(flags), 4) != sizeof(flags)) continue;
      const uint32_t kHashBased = 1, kCheckSource = 2;
      if (flags != (kHashBased | kCheckSource)) continue;
      flags = kHashBased;
      if (::pwrite(fd.get(), &flags, sizeof(flags), 4) != sizeof(flags))
        return fail_errno("write " + it->path().string());
    }
    if (ec) return fail_with("walk " + root + "/usr", ec.value());
    return {};
  }

  Result<std::vector<Package>> packages() {
    ToolRun tool;
    tool.argv = {"dpkg-query", "--admindir=" + root + "/var/lib/dpkg", "-W",
                 "-f=" + std::string(kDpkgQueryFormat)};
    std::string out;
    tool.on_stdout = [&](std::string_view line) { out += std::string(line) + "\n"; };
    tool.on_stderr = [](std::string_view) {};
    auto exit = run_tool(tool);
    if (!exit) return std::unexpected(exit.error());
    if (!exit->ok()) return std::unexpected(failed("dpkg-query", *exit).error());
    return parse_dpkg_query(out);
  }

  Status smoke() {
    std::vector<std::string> argv = {"unshare", "--net",      "--pid",        "--mount", "--ipc",
                                     "--uts",   "--fork",     "--kill-child", "--",      "/bin/sh",
                                     "-c",      kSmokeScript, "smoke",        root};
    argv.push_back(kPath);
    argv.push_back("HOME=/tmp");
    for (const auto& [k, v] : recipe.env) argv.push_back(k + "=" + v);
    ToolRun tool;
    tool.argv = argv;
    tool.env = {kPath, "LANG=C.UTF-8", "AIRLOCK_SMOKE=" + recipe.smoke};
    tool.interrupted = options.interrupted;
    tool.on_stdout = [&](std::string_view line) { say(std::string("    | ") + std::string(line)); };
    auto exit = run_tool(tool);
    if (!exit) return std::unexpected(exit.error());
    if (exit->interrupted)
      return fail("interrupted during the smoke test: nothing was added to the store");
    if (!exit->ok())
      return fail("the smoke command failed (" +
                  (exit->signal ? "signal " + std::to_string(exit->signal)
                                : "exit status " + std::to_string(exit->code)) +
                  "): nothing was added to the store; its output:\n" + exit->tail);
    return {};
  }

  Status make_erofs(const std::string& image_file) {
    // Outside the tree (it is not part of the image), in the build's own directory.
    std::string hints = dir + "/compress-hints";
    if (auto st = sys::write_file_atomic(hints, erofs_compress_hints()); !st) return st;
    auto exit = run({"mkfs.erofs", "-zlz4hc", "--compress-hints=" + hints,
                     "-T" + std::to_string(options.source_date_epoch), "-U" + erofs_uuid(digest),
                     image_file, root},
                    false);
    if (!exit) return std::unexpected(exit.error());
    if (!exit->ok()) return failed("mkfs.erofs", *exit);
    return {};
  }
};

uint64_t tree_size(const std::string& root) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) total += it->file_size(ec);
  return total;
}

}  // namespace

std::string erofs_uuid(std::string_view recipe_digest) {
  std::string hex = Sha256::of("airlock erofs uuid " + std::string(recipe_digest)).substr(0, 32);
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20, 12);
}

Result<BuildResult> build_image(const ImageStore& store, const BuildOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::string started_at = now_utc();
  auto recipe = load_recipe(options.recipe_path);
  if (!recipe) return std::unexpected(recipe.error());
  BuildResult result;
  result.recipe_digest = recipe_digest(*recipe);
  if (::geteuid() != 0)
    return fail("airlock image build needs root (mmdebstrap --mode=root, mkfs.erofs)");

  if (!options.force) {
    if (auto existing = store.built_from(recipe->name, result.recipe_digest)) {
      result.image = *existing;
      result.reused = true;
      return result;
    }
  }
  if (auto st = store.create_layout(); !st) return std::unexpected(st.error());
  auto dir = BuildDir::create(store.tmp_dir(), "build-" + recipe->name);
  if (!dir) return std::unexpected(dir.error());

  Builder b{store, options, *recipe, result.recipe_digest, dir->path(), dir->path() + "/root",
            {},    0};
  b.say("building " + recipe->name + " (recipe " + result.recipe_digest + ")");
  b.phase("the host's Debian mirror (apt-get indextargets)");
  auto sources = host_debian_sources(recipe->suite);
  if (!sources) return std::unexpected(sources.error());
  for (const std::string& line : split(*sources, '\n'))
    if (!line.empty()) b.say("    " + line);
  if (auto st = b.check_interrupt(); !st) return std::unexpected(st.error());

  b.phase("mmdebstrap " + recipe->suite + " (" + recipe->variant + ", " +
          std::to_string(recipe->packages.size()) + " packages asked for)");
  if (auto st = b.bootstrap(*sources); !st) return std::unexpected(st.error());
  if (auto st = b.check_interrupt(); !st) return std::unexpected(st.error());

  b.phase("extra files (" + std::to_string(recipe->files.size()) + ") and cleanup");
  if (auto st = b.write_files(); !st) return std::unexpected(st.error());
  if (auto st = b.sanitize(); !st) return std::unexpected(st.error());

  b.phase("package list (dpkg-query)");
  auto packages = b.packages();
  if (!packages) return std::unexpected(packages.error());
  b.say("    " + std::to_string(packages->size()) + " packages installed");
  if (auto st = b.check_interrupt(); !st) return std::unexpected(st.error());

  b.phase("smoke command (no network, fresh namespaces, uid 65534)");
  if (auto st = b.smoke(); !st) return std::unexpected(st.error());
  result.tree_bytes = tree_size(b.root);

  b.phase("mkfs.erofs (lz4hc, the loader, libc and python3 uncompressed, SOURCE_DATE_EPOCH " + std::to_string(options.source_date_epoch) +
          ")");
  std::string image_file = b.dir + "/image.erofs";
  if (auto st = b.make_erofs(image_file); !st) return std::unexpected(st.error());
  if (auto st = b.check_interrupt(); !st) return std::unexpected(st.error());

  BuildFacts facts;
  facts.recipe_digest = result.recipe_digest;
  facts.packages = std::move(*packages);
  facts.source_date_epoch = options.source_date_epoch;
  facts.started_at = started_at;
  facts.sources = *sources;
  facts.erofs_uuid = erofs_uuid(result.recipe_digest);
  for (const char* tool : {"mmdebstrap", "erofs-utils", "apt", "dpkg"})
    facts.tools[tool] = tool_version({"dpkg-query", "-W", "-f=${Version}\\n", tool});
  facts.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto image = store.add(recipe->name, image_file, make_manifest(*recipe, facts));
  if (!image) return std::unexpected(image.error());
  if (auto st = dir->remove(); !st) return std::unexpected(st.error());
  result.image = *image;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace airlock::images
