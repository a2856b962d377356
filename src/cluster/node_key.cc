#include "cluster/node_key.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "base/sha256.h"
#include "base/unique_fd.h"

namespace airlock::cluster {

Status check_node_key(std::string_view key) {
  if (key.size() < kMinNodeKeyBytes)
    return fail("node_key: at least " + std::to_string(kMinNodeKeyBytes) + " characters (it has " +
                std::to_string(key.size()) + "); make one with: head -c 32 /dev/urandom | base64");
  if (key.size() > kMaxNodeKeyBytes) return fail("node_key: at most " + std::to_string(kMaxNodeKeyBytes) + " characters");
  for (unsigned char ch : key)
    if (ch <= 0x20 || ch >= 0x7f) return fail("node_key: printable ASCII without spaces only");
  return {};
}

Result<std::string> resolve_node_key(const std::string& inline_key, const std::string& key_file, bool required) {
  if (!inline_key.empty() && !key_file.empty())
    return fail("configuration: node_key and node_key_file both set; use one");
  std::string key = inline_key;
  if (!key_file.empty()) {
    UniqueFd fd(::open(key_file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd) return fail_errno("node_key_file " + key_file);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return fail_errno("node_key_file " + key_file);
    if (!S_ISREG(st.st_mode)) return fail("node_key_file " + key_file + ": not a regular file");
    // Kubernetes mounts a Secret as a symlink into a ..data directory with
    // the mode the manifest gives (0400 there); anything readable by others leaks.
    if (st.st_mode & (S_IRWXG | S_IRWXO))
      return fail("node_key_file " + key_file + ": readable by group or others (chmod 600 it)");
    std::string text(kMaxNodeKeyBytes + 2, '\0');
    ssize_t n = ::read(fd.get(), text.data(), text.size());
    if (n < 0) return fail_errno("node_key_file " + key_file);
    text.resize(static_cast<size_t>(n));
    if (auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
    if (!text.empty() && text.back() == '\r') text.pop_back();
    key = std::move(text);
    if (key.empty()) return fail("node_key_file " + key_file + ": empty");
  }
  if (key.empty()) {
    if (!required) return std::string();
    return fail("configuration: role api and worker need the cluster's node key: node_key = \"...\" in the "
                "configuration file, or node_key_file = \"/path\" (mode 0600); never on the command line");
  }
  if (auto st = check_node_key(key); !st) return std::unexpected(st.error());
  return key;
}

bool node_key_matches(std::string_view expected, std::string_view presented) {
  if (expected.empty()) return false;
  // Not OpenSSL's one-shot SHA256(): in OpenSSL 3 it goes through EVP, whose
  // provider machinery would be linked in for it (base/openssl.h).
  std::string a = Sha256::of(expected), b = Sha256::of(presented);
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace airlock::cluster
