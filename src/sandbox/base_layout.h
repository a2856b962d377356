// What every sandbox root has, whatever its image: the top level, a
// synthetic /etc (a passwd entry for the sandbox user, hosts, no resolver, no
// host secrets), a minimal /dev and the /proc masks. An image then adds its
// /usr, the top-level links and the public /etc files programs need.
#pragma once

#include <sys/types.h>

#include <array>
#include <vector>

#include "sandbox/spec.h"

namespace airlock::sandbox {

// Top-level names a Debian root has as links into /usr (or directories).
inline constexpr std::array<const char*, 6> kTopLevel = {"bin", "sbin", "lib", "lib32", "lib64", "libx32"};

// Public files of an image's /etc that programs need (dynamic loader,
// alternatives links, Python and matplotlib defaults, MIME types, CA certs,
// fonts), relative to /etc.
inline constexpr std::array<const char*, 11> kEtcImports = {
    "fonts",
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "matplotlibrc",
    "python3",     "python3.11", "mime.types",   "ssl/certs",    "ca-certificates.conf"};

// Directories, the synthetic /etc, /dev nodes and links, /proc masks.
void add_base_layout(SandboxSpec& spec);

// The synthetic /etc files, for tests and the digest.
std::vector<FileEntry> synthetic_etc(uid_t uid, gid_t gid);

}  // namespace airlock::sandbox
