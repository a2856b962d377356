#include "sandbox/spec_codec.h"

#include "base/wire.h"

namespace airlock::sandbox {
namespace {

constexpr uint32_t kVersion = 1;

void put_strings(wire::Writer& w, const std::vector<std::string>& list) {
  w.u32(static_cast<uint32_t>(list.size()));
  for (const auto& s : list) w.str(s);
}

std::vector<std::string> get_strings(wire::Reader& r) {
  std::vector<std::string> out(r.count(4));
  for (auto& s : out) s = r.str();
  return out;
}

}  // namespace

EncodedSpec encode_spec(const SandboxSpec& spec) {
  wire::Writer w;
  EncodedSpec out;
  w.u32(kVersion);
  w.str(spec.root_mountpoint);
  w.str(spec.root_tmpfs_options);
  put_strings(w, spec.dirs);
  w.u32(static_cast<uint32_t>(spec.files.size()));
  for (const auto& f : spec.files) {
    w.str(f.path);
    w.str(f.content);
    w.u32(f.mode);
  }
  w.u32(static_cast<uint32_t>(spec.symlinks.size()));
  for (const auto& l : spec.symlinks) {
    w.str(l.link_target);
    w.str(l.path);
  }
  w.u32(static_cast<uint32_t>(spec.binds.size()));
  for (const auto& b : spec.binds) {
    w.str(b.source);
    w.str(b.target);
    w.u32((b.is_file ? 1u : 0u) | (b.recursive ? 2u : 0u) | (b.noexec ? 4u : 0u));
  }
  w.u32(static_cast<uint32_t>(spec.attach.size()));
  for (const auto& a : spec.attach) {
    w.u32(static_cast<uint32_t>(out.fds.size()));
    out.fds.push_back(a.fd);
    w.str(a.target);
    w.u32((a.writable ? 1u : 0u) | (a.is_file ? 2u : 0u));
  }
  put_strings(w, spec.proc_mask_files);
  put_strings(w, spec.proc_mask_dirs);
  put_strings(w, spec.proc_readonly);
  w.str(spec.hostname);
  w.u32(spec.uid);
  w.u32(spec.gid);
  w.u32(static_cast<uint32_t>(spec.rlimits.size()));
  for (const auto& l : spec.rlimits) {
    w.u32(static_cast<uint32_t>(l.resource));
    w.u64(l.soft);
    w.u64(l.hard);
  }
  w.u32(static_cast<uint32_t>(spec.seccomp.instructions.size()));
  for (const auto& ins : spec.seccomp.instructions) w.bytes(&ins, sizeof(ins));
  out.bytes = w.take();
  return out;
}

Result<SandboxSpec> decode_spec(const std::string& bytes, const std::vector<int>& fds) {
  wire::Reader r(bytes);
  SandboxSpec spec;
  if (r.u32() != kVersion) return fail("a sandbox spec of another version");
  spec.root_mountpoint = r.str();
  spec.root_tmpfs_options = r.str();
  spec.dirs = get_strings(r);
  spec.files.resize(r.count(12));
  for (auto& f : spec.files) {
    f.path = r.str();
    f.content = r.str();
    f.mode = r.u32();
  }
  spec.symlinks.resize(r.count(8));
  for (auto& l : spec.symlinks) {
    l.link_target = r.str();
    l.path = r.str();
  }
  spec.binds.resize(r.count(12));
  for (auto& b : spec.binds) {
    b.source = r.str();
    b.target = r.str();
    uint32_t flags = r.u32();
    b.is_file = flags & 1;
    b.recursive = flags & 2;
    b.noexec = flags & 4;
  }
  spec.attach.resize(r.count(12));
  for (auto& a : spec.attach) {
    uint32_t index = r.u32();
    if (r.ok() && index >= fds.size()) return fail("a sandbox spec names an fd it was not sent");
    a.fd = r.ok() ? fds[index] : -1;
    a.target = r.str();
    uint32_t flags = r.u32();
    a.writable = flags & 1;
    a.is_file = flags & 2;
  }
  spec.proc_mask_files = get_strings(r);
  spec.proc_mask_dirs = get_strings(r);
  spec.proc_readonly = get_strings(r);
  spec.hostname = r.str();
  spec.uid = r.u32();
  spec.gid = r.u32();
  spec.rlimits.resize(r.count(20));
  for (auto& l : spec.rlimits) {
    l.resource = static_cast<int>(r.u32());
    l.soft = r.u64();
    l.hard = r.u64();
  }
  spec.seccomp.instructions.resize(r.count(sizeof(sock_filter)));
  for (auto& ins : spec.seccomp.instructions) r.bytes(&ins, sizeof(ins));
  if (!r.done()) return fail("a malformed sandbox spec");
  return spec;
}

}  // namespace airlock::sandbox
