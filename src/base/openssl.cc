#include "base/openssl.h"

#include <dlfcn.h>

#include "base/check.h"

namespace airlock {

Result<OpenSsl> load_openssl(const char* library) {
  // Never closed: OpenSSL keeps per-thread state and exit handlers.
  void* handle = ::dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return fail(std::string("load ") + library +
                " (OpenSSL 3, package libssl3): " + (why ? why : "unknown error"));
  }
  OpenSsl fns;
  // dlsym on libssl's handle also finds libcrypto's functions: it searches
  // the library's dependencies too.
#define AIRLOCK_OPENSSL_LOAD(name)                                         \
  fns.name = reinterpret_cast<decltype(fns.name)>(::dlsym(handle, #name)); \
  if (fns.name == nullptr) return fail(std::string(library) + " has no function " #name);
  AIRLOCK_OPENSSL_FUNCTIONS(AIRLOCK_OPENSSL_LOAD)
#undef AIRLOCK_OPENSSL_LOAD
  return fns;
}

namespace {

const Result<OpenSsl>& loaded() {
  static const Result<OpenSsl> fns = load_openssl("libssl.so.3");
  return fns;
}

}  // namespace

Result<const OpenSsl*> openssl() {
  const auto& fns = loaded();
  if (!fns) return std::unexpected(fns.error());
  return &*fns;
}

const OpenSsl& openssl_loaded() {
  const auto& fns = loaded();
  AIRLOCK_CHECK(fns.has_value());
  return *fns;
}

}  // namespace airlock
