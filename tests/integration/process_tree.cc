#include "process_tree.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>

#include "sys/file_io.h"

namespace airlock::testing {

namespace {

std::optional<TreeProc> read_stat(pid_t pid) {
  // The process may end between the listing and this read: then it is not there.
  auto text = sys::read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!text) return std::nullopt;
  auto paren = text->rfind(')');
  if (paren == std::string::npos || paren + 2 > text->size()) return std::nullopt;
  std::istringstream rest(text->substr(paren + 2));
  TreeProc p;
  p.pid = pid;
  char state = 0;
  rest >> state >> p.ppid;
  std::string skip;
  for (int field = 5; field < 22; ++field) rest >> skip;  // 22 is starttime
  rest >> p.start;
  p.zombie = state == 'Z' || state == 'X';
  struct stat st{};
  if (::stat(("/proc/" + std::to_string(pid)).c_str(), &st) == 0) p.uid = st.st_uid;
  return rest ? std::optional(p) : std::nullopt;
}

}  // namespace

std::vector<TreeProc> tree_below(pid_t root) {
  std::vector<TreeProc> all;
  for (const auto& name : dir_entries("/proc"))
    if (pid_t pid = std::atoi(name.c_str()); pid > 0)
      if (auto p = read_stat(pid)) all.push_back(*p);
  std::set<pid_t> tree = {root};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& p : all)
      if (!tree.count(p.pid) && tree.count(p.ppid)) grew = tree.insert(p.pid).second;
  }
  std::vector<TreeProc> out;
  for (const auto& p : all)
    if (p.pid != root && tree.count(p.pid) && !p.zombie) out.push_back(p);
  return out;
}

bool still_running(const TreeProc& p) {
  auto now = read_stat(p.pid);
  return now && now->start == p.start && !now->zombie;
}

std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (std::string n = e->d_name; n != "." && n != "..") out.push_back(n);
    ::closedir(d);
  }
  return out;
}

}  // namespace airlock::testing
