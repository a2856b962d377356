// Picks the cgroup backend for this host from /proc/self/mountinfo, and the
// pure mountinfo parsing behind it (cgroup_mounts.h).
#include <algorithm>
#include <array>

#include "sandbox/cgroup.h"
#include "sandbox/cgroup_files.h"
#include "sandbox/cgroup_mounts.h"
#include "sys/file_io.h"

namespace airlock::sandbox {
namespace {

constexpr std::array<std::string_view, 3> kRequired = {"memory", "pids", "cpu"};

// mountinfo escapes ' ', '\t', '\n' and '\\' as three octal digits.
std::string unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() &&
        std::all_of(s.begin() + i + 1, s.begin() + i + 4, [](char c) { return c >= '0' && c <= '7'; })) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(sep, i);
    if (j == std::string_view::npos) j = s.size();
    if (j > i) parts.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

bool beneath(std::string_view path, std::string_view dir) {
  return path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/';
}

std::string parent_dir(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

}  // namespace

bool CgroupMount::has_option(std::string_view option) const {
  return std::find(options.begin(), options.end(), option) != options.end();
}

std::vector<CgroupMount> parse_cgroup_mounts(std::string_view mountinfo) {
  std::vector<CgroupMount> mounts;
  for (std::string_view line : split(mountinfo, '\n')) {
    // id parent major:minor root mount_point options [optional...] - fstype source super_options
    auto fields = split(line, ' ');
    auto dash = std::find(fields.begin(), fields.end(), std::string_view("-"));
    if (dash - fields.begin() < 6 || fields.end() - dash < 4) continue;
    std::string_view fstype = dash[1];
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    CgroupMount m;
    m.root = unescape(fields[3]);
    m.mount_point = unescape(fields[4]);
    m.v2 = fstype == "cgroup2";
    for (std::string_view opt : split(dash[3], ',')) m.options.emplace_back(opt);
    mounts.push_back(std::move(m));
  }
  return mounts;
}

std::vector<std::string> v1_controllers_for_new_group(bool cgroup2_counts_cpu, bool cgroup2_kills) {
  std::vector<std::string> out = {"memory", "pids", "cpu"};
  if (!cgroup2_counts_cpu) out.push_back("cpuacct");
  if (!cgroup2_kills) out.push_back("freezer");
  return out;
}

std::map<std::string, std::string> v1_controller_mounts(const std::vector<CgroupMount>& mounts,
                                                        std::string_view v1_root,
                                                        const std::vector<std::string>& controllers) {
  std::map<std::string, std::string> out;
  for (const auto& c : controllers) {
    const CgroupMount* best = nullptr;
    for (const auto& m : mounts) {
      if (m.v2 || !m.has_option(c)) continue;
      if (best == nullptr || (!beneath(best->mount_point, v1_root) && beneath(m.mount_point, v1_root))) {
        best = &m;
      }
    }
    if (best != nullptr) out[c] = best->mount_point;
  }
  return out;
}

Result<CgroupLayout> choose_cgroup_layout(const std::vector<CgroupMount>& mounts,
                                          std::string_view root_controllers,
                                          std::string_view sys_fs_cgroup) {
  // The last mount at a point is the visible one.
  const CgroupMount* at_root = nullptr;
  for (const auto& m : mounts) {
    if (m.mount_point == sys_fs_cgroup) at_root = &m;
  }
  auto available = cgroupfs::parse_words(root_controllers);
  bool v2_complete = std::all_of(kRequired.begin(), kRequired.end(), [&](std::string_view c) {
    return std::find(available.begin(), available.end(), c) != available.end();
  });
  if (at_root != nullptr && at_root->v2 && v2_complete) {
    return CgroupLayout{.kind = CgroupLayout::Kind::kV2, .v2_root = at_root->mount_point};
  }

  auto v1 = v1_controller_mounts(mounts, sys_fs_cgroup, {"memory", "pids", "cpu"});
  if (v1.size() != kRequired.size()) {
    return fail("no cgroup hierarchy offers the memory, pids and cpu controllers");
  }
  CgroupLayout layout{.kind = CgroupLayout::Kind::kV1, .v1_root = parent_dir(v1["memory"])};
  for (const auto& m : mounts) {
    if (!m.v2) continue;
    if (layout.unified.empty() || (!beneath(layout.unified, layout.v1_root) &&
                                   beneath(m.mount_point, layout.v1_root))) {
      layout.unified = m.mount_point;
    }
  }
  return layout;
}

Status check_v2_socket_accounting(std::string_view kernel_cmdline) {
  for (std::string_view word : cgroupfs::parse_words(kernel_cmdline)) {
    if (word == "--") break;  // what follows belongs to init, not the kernel
    if (!word.starts_with("cgroup.memory=")) continue;
    for (std::string_view option : split(word.substr(word.find('=') + 1), ',')) {
      if (option == "nosocket") {
        return fail("cgroup v2: the kernel was booted with cgroup.memory=nosocket, so socket buffers "
                    "would be outside the jobs' memory limit; boot without it");
      }
    }
  }
  return {};
}

Result<std::unique_ptr<CgroupBackend>> detect_cgroup_backend(std::string parent) {
  constexpr const char* kSysFsCgroup = "/sys/fs/cgroup";
  auto text = sys::read_file("/proc/self/mountinfo");
  if (!text) return std::unexpected(text.error());
  auto mounts = parse_cgroup_mounts(*text);
  std::string controllers;
  bool root_is_v2 = std::any_of(mounts.begin(), mounts.end(), [&](const CgroupMount& m) {
    return m.v2 && m.mount_point == kSysFsCgroup;
  });
  if (root_is_v2) {
    controllers = sys::read_file(cgroupfs::join(kSysFsCgroup, "cgroup.controllers")).value_or("");
  }
  auto layout = choose_cgroup_layout(mounts, controllers, kSysFsCgroup);
  if (!layout) return std::unexpected(layout.error());
  if (layout->kind == CgroupLayout::Kind::kV2) {
    auto cmdline = sys::read_file("/proc/cmdline");
    if (!cmdline) return std::unexpected(cmdline.error());
    if (auto st = check_v2_socket_accounting(*cmdline); !st) return std::unexpected(st.error());
    return make_cgroup_v2_backend(layout->v2_root, std::move(parent));
  }
  return make_cgroup_v1_backend(layout->v1_root, layout->unified, mounts, std::move(parent));
}

}  // namespace airlock::sandbox
