// Workspace snapshots: capture and restore of a ~100 MB workspace (100 files
// of 1 MB in 10 directories, plus 200 small files), against `cp -a` of the
// same tree between two tmpfs mounts in the same run. Needs root (detached
// tmpfs mounts). The content directory is on the data disk, as in the
// service; its files are in the page cache after the capture.
//
//   snapshot_bench [--reps N] [--dir DIR]
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "sandbox/tmpfs.h"
#include "store/cas.h"
#include "sys/file_io.h"
#include "workspace/snapshot_tree.h"

using namespace airlock;

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

UniqueFd tmpfs_root(UniqueFd& mount) {
  auto m = sandbox::make_detached_tmpfs({512ull << 20, 65536, 0755, 3000001, 3000001, false});
  if (!m) {
    std::fprintf(stderr, "tmpfs: %s (run as root)\n", m.error().message().c_str());
    std::exit(1);
  }
  mount = std::move(*m);
  return UniqueFd(::openat(mount.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

void fill(int root) {
  std::mt19937_64 rng(42);
  std::string mb(1 << 20, '\0');
  for (int d = 0; d < 10; ++d) {
    std::string dir = "dir" + std::to_string(d);
    ::mkdirat(root, dir.c_str(), 0755);
    for (int f = 0; f < 10; ++f) {
      for (size_t i = 0; i < mb.size(); i += 8) {
        uint64_t v = rng();
        std::memcpy(&mb[i], &v, 8);
      }
      std::string rel = dir + "/big" + std::to_string(f) + ".bin";
      UniqueFd fd(::openat(root, rel.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
      (void)sys::write_all(fd.get(), mb);
    }
    for (int f = 0; f < 20; ++f) {
      std::string rel = dir + "/small" + std::to_string(f) + ".txt";
      UniqueFd fd(::openat(root, rel.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
      (void)sys::write_all(fd.get(), std::string(1000 + static_cast<size_t>(f), 'a' + static_cast<char>(d)));
    }
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7;
  std::string base = "/var/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--reps") reps = std::max(1, std::atoi(argv[i + 1]));
    if (a == "--dir") base = argv[i + 1];
  }
  std::string tmpl = base + "/airlock-snapshot-bench-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string dir = tmpl;
  store::ContentStore cas(dir + "/content");
  if (!cas.create_dirs()) return 1;

  UniqueFd source_mount;
  UniqueFd source = tmpfs_root(source_mount);
  fill(source.get());

  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> created;  // the bench keeps its contents until the directory goes
  auto captured = workspace::capture_tree(source.get(), cas, {}, created);
  double capture_ms = ms_since(t0);
  if (!captured) {
    std::fprintf(stderr, "capture: %s\n", captured.error().message().c_str());
    return 1;
  }
  const auto& m = captured->manifest;
  std::printf("workspace: %zu entries, %.1f MB\n", m.entries().size(), m.total_bytes() / 1048576.0);
  std::printf("capture (copy + sha256 + fsync into %s): %.1f ms\n", base.c_str(), capture_ms);

  std::vector<double> restore, cp;
  for (int r = 0; r < reps; ++r) {
    {
      UniqueFd mount;
      UniqueFd dest = tmpfs_root(mount);
      auto t = std::chrono::steady_clock::now();
      auto st = workspace::restore_tree(m, cas, dest.get(), 3000001, 3000001);
      restore.push_back(ms_since(t));
      if (!st) {
        std::fprintf(stderr, "restore: %s\n", st.error().message().c_str());
        return 1;
      }
    }
    {
      // Baseline: cp -a of the same tree, tmpfs to tmpfs (fds without
      // CLOEXEC so that cp sees them as /proc/self/fd/N).
      UniqueFd mount;
      UniqueFd dest = tmpfs_root(mount);
      UniqueFd src_fd(::dup(source.get())), dest_fd(::dup(dest.get()));
      std::string cmd = "cp -a /proc/self/fd/" + std::to_string(src_fd.get()) + "/. /proc/self/fd/" +
                        std::to_string(dest_fd.get()) + "/";
      auto t = std::chrono::steady_clock::now();
      int rc = std::system(cmd.c_str());
      cp.push_back(ms_since(t));
      if (rc != 0) {
        std::fprintf(stderr, "cp -a failed\n");
        return 1;
      }
    }
  }
  double r = median(restore), c = median(cp);
  std::printf("restore into a fresh tmpfs: median %.1f ms (min %.1f, max %.1f) over %d runs\n", r,
              *std::min_element(restore.begin(), restore.end()),
              *std::max_element(restore.begin(), restore.end()), reps);
  std::printf("cp -a tmpfs to tmpfs:       median %.1f ms (min %.1f, max %.1f)\n", c,
              *std::min_element(cp.begin(), cp.end()), *std::max_element(cp.begin(), cp.end()));
  std::printf("restore / cp -a: %.2f\n", r / c);
  std::filesystem::remove_all(dir);
  return 0;
}
