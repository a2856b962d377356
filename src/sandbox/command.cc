#include "sandbox/command.h"

#include <cstdint>
#include <cstring>

namespace airlock::sandbox {
namespace {

// Layout: seven little-endian uint32 (counts of argv, env, candidates and
// writable paths; 1 for cwd; the restrict_writes flag; the layer's
// instruction count), then every string NUL-terminated (argv, env,
// candidates, writable, cwd), then the layer's instructions.
constexpr size_t kCounts = 7;
constexpr size_t kHeader = kCounts * sizeof(uint32_t);
constexpr size_t kLists = 4;

void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

}  // namespace

Result<std::string> encode_command(const Command& c) {
  if (c.argv.empty()) return fail("the command is empty");
  if (c.cwd.empty() || c.cwd[0] != '/') return fail("the working directory must be absolute");
  size_t strings = c.argv.size() + c.env.size() + c.exec_candidates.size() + c.writable.size() + 1;
  if (strings + kLists > kMaxCommandStrings) return fail("the command has too many arguments");
  if (c.layer.size() > BPF_MAXINSNS) return fail("the profile's seccomp layer is too long");
  std::string out;
  put_u32(out, static_cast<uint32_t>(c.argv.size()));
  put_u32(out, static_cast<uint32_t>(c.env.size()));
  put_u32(out, static_cast<uint32_t>(c.exec_candidates.size()));
  put_u32(out, static_cast<uint32_t>(c.writable.size()));
  put_u32(out, 1);
  put_u32(out, c.restrict_writes ? 1 : 0);
  put_u32(out, static_cast<uint32_t>(c.layer.size()));
  for (const auto* list : {&c.argv, &c.env, &c.exec_candidates, &c.writable}) {
    for (const auto& s : *list) {
      if (s.find('\0') != std::string::npos)
        return fail("a command argument or variable contains a NUL byte");
      out += s;
      out += '\0';
    }
  }
  if (c.cwd.find('\0') != std::string::npos)
    return fail("the working directory contains a NUL byte");
  out += c.cwd;
  out += '\0';
  out.append(reinterpret_cast<const char*>(c.layer.data()), c.layer.size() * sizeof(sock_filter));
  if (out.size() > kMaxCommandBytes)
    return fail("the command and its environment take " + std::to_string(out.size()) +
                " bytes; at most " + std::to_string(kMaxCommandBytes) + " fit");
  return out;
}

bool decode_command(char* buf, size_t len, char** slots, size_t nslots, CommandView* out) {
  if (len < kHeader) return false;
  uint32_t n[kCounts];
  std::memcpy(n, buf, kHeader);
  if (n[0] == 0 || n[4] != 1 || n[5] > 1 || n[6] > BPF_MAXINSNS) return false;
  size_t total = size_t{n[0]} + n[1] + n[2] + n[3];
  if (total > kMaxCommandStrings || total + kLists > nslots) return false;
  size_t layer_bytes = size_t{n[6]} * sizeof(sock_filter);
  if (len - kHeader < layer_bytes) return false;
  size_t end = len - layer_bytes;  // where the strings end
  size_t pos = kHeader;
  size_t slot = 0;
  char** lists[kLists];
  for (size_t list = 0; list < kLists; ++list) {
    lists[list] = slots + slot;
    for (uint32_t i = 0; i < n[list]; ++i) {
      if (pos >= end) return false;
      const void* nul = std::memchr(buf + pos, '\0', end - pos);
      if (nul == nullptr) return false;
      slots[slot++] = buf + pos;
      pos = static_cast<size_t>(static_cast<const char*>(nul) - buf) + 1;
    }
    slots[slot++] = nullptr;
  }
  if (pos >= end) return false;
  const void* nul = std::memchr(buf + pos, '\0', end - pos);
  if (nul == nullptr || static_cast<size_t>(static_cast<const char*>(nul) - buf) + 1 != end)
    return false;
  out->argv = lists[0];
  out->env = lists[1];
  out->candidates = lists[2];
  out->writable = lists[3];
  out->cwd = buf + pos;
  out->restrict_writes = n[5] == 1;
  out->layer = n[6] ? buf + end : nullptr;
  out->layer_count = n[6];
  return out->cwd[0] == '/';
}

}  // namespace airlock::sandbox
