#include "sandbox/command.h"

#include <cstdint>
#include <cstring>

namespace airlock::sandbox {
namespace {

// Layout: four little-endian uint32 counts (argv, env, candidates, 1 for
// cwd), then every string NUL-terminated, in that order.
constexpr size_t kHeader = 4 * sizeof(uint32_t);

void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

}  // namespace

Result<std::string> encode_command(const Command& c) {
  if (c.argv.empty()) return fail("the command is empty");
  if (c.cwd.empty() || c.cwd[0] != '/') return fail("the working directory must be absolute");
  size_t strings = c.argv.size() + c.env.size() + c.exec_candidates.size() + 1;
  if (strings + 3 > kMaxCommandStrings) return fail("the command has too many arguments");
  std::string out;
  put_u32(out, static_cast<uint32_t>(c.argv.size()));
  put_u32(out, static_cast<uint32_t>(c.env.size()));
  put_u32(out, static_cast<uint32_t>(c.exec_candidates.size()));
  put_u32(out, 1);
  for (const auto* list : {&c.argv, &c.env, &c.exec_candidates}) {
    for (const auto& s : *list) {
      if (s.find('\0') != std::string::npos) return fail("a command argument or variable contains a NUL byte");
      out += s;
      out += '\0';
    }
  }
  if (c.cwd.find('\0') != std::string::npos) return fail("the working directory contains a NUL byte");
  out += c.cwd;
  out += '\0';
  if (out.size() > kMaxCommandBytes)
    return fail("the command and its environment take " + std::to_string(out.size()) +
                " bytes; at most " + std::to_string(kMaxCommandBytes) + " fit");
  return out;
}

bool decode_command(char* buf, size_t len, char** slots, size_t nslots, CommandView* out) {
  if (len < kHeader) return false;
  uint32_t n[4];
  std::memcpy(n, buf, kHeader);
  if (n[0] == 0 || n[3] != 1) return false;
  size_t total = size_t{n[0]} + n[1] + n[2];
  if (total > kMaxCommandStrings || total + 3 > nslots) return false;
  size_t pos = kHeader;
  size_t slot = 0;
  char** lists[3];
  for (int list = 0; list < 3; ++list) {
    lists[list] = slots + slot;
    for (uint32_t i = 0; i < n[list]; ++i) {
      if (pos >= len) return false;
      const void* nul = std::memchr(buf + pos, '\0', len - pos);
      if (nul == nullptr) return false;
      slots[slot++] = buf + pos;
      pos = static_cast<size_t>(static_cast<const char*>(nul) - buf) + 1;
    }
    slots[slot++] = nullptr;
  }
  if (pos >= len) return false;
  const void* nul = std::memchr(buf + pos, '\0', len - pos);
  if (nul == nullptr || static_cast<const char*>(nul) - buf + 1 != static_cast<ptrdiff_t>(len)) return false;
  out->argv = lists[0];
  out->env = lists[1];
  out->candidates = lists[2];
  out->cwd = buf + pos;
  return out->cwd[0] == '/';
}

}  // namespace airlock::sandbox
