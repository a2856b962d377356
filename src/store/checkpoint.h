// Signed checkpoints of a tenant's chain head (docs/store.md, "Checkpoints"):
// one JSON line each, Ed25519 over a canonical byte string, so that a chain
// recomputed by someone who can write the database no longer matches what was
// signed with a key kept outside it. Pure: no file, no clock. OpenSSL is
// loaded when a key is first made or read (base/openssl.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/openssl.h"
#include "base/result.h"

namespace airlock::store {

struct EvpKeyFree {
  void operator()(EVP_PKEY* k) const { openssl_loaded().EVP_PKEY_free(k); }
};
using EvpKey = std::unique_ptr<EVP_PKEY, EvpKeyFree>;

struct Checkpoint {
  std::string tenant_id;
  int64_t seq = 0;
  std::string head_hash;  // the record hash at `seq` (64 hex)
  std::string time;       // RFC 3339, informative (signed too)
  std::string key_id;     // 16 hex of sha256(raw public key)
  std::string signature;  // base64 of the 64-byte Ed25519 signature
};

// A new Ed25519 key pair.
Result<EvpKey> generate_checkpoint_key();
// PEM (PKCS#8 private / SubjectPublicKeyInfo public) to and from keys; reading
// a private PEM for a public key is fine (its public half is used).
Result<std::string> private_key_pem(EVP_PKEY* key);
Result<std::string> public_key_pem(EVP_PKEY* key);
Result<EvpKey> read_private_key_pem(std::string_view pem);
Result<EvpKey> read_public_key_pem(std::string_view pem);
// 16 hex of sha256 of the raw 32-byte public key.
Result<std::string> checkpoint_key_id(EVP_PKEY* key);

// The bytes signed: "airlock-checkpoint-v1\n" tenant "\n" seq "\n" head "\n" time "\n" key_id.
std::string checkpoint_signed_bytes(const Checkpoint& c);

// Ed25519 over `bytes` with the checkpoint key: the base64 of the 64-byte
// signature. Checkpoints and retention records (store/retention_proof.h) are
// signed with it.
Result<std::string> sign_with_checkpoint_key(std::string_view bytes, EVP_PKEY* private_key);
// That `signature` (base64) is `key`'s over `bytes`; a failure names `what`
// ("the checkpoint": "bad signature: the checkpoint was changed or not signed
// by this key").
Status verify_checkpoint_key_signature(std::string_view bytes, std::string_view signature,
                                       EVP_PKEY* public_key, std::string_view what);

// Fills key_id and signature, returns the line (no newline).
Result<std::string> make_checkpoint_line(Checkpoint c, EVP_PKEY* private_key);
// Parses one line (untrusted): every field present, of its type and form.
Result<Checkpoint> parse_checkpoint_line(std::string_view line);
// The key id is the key's and the signature verifies over the fields.
Status verify_checkpoint(const Checkpoint& c, EVP_PKEY* public_key);

// Compares a (verified) checkpoint with the chain now: `hash_now` is the
// chain's hash at c.seq (nullopt: no record there), `removed_by_retention`
// whether a retention record removed that seq. Returns the problem, or "".
std::string checkpoint_mismatch(const Checkpoint& c, const std::optional<std::string>& hash_now,
                                bool removed_by_retention);

}  // namespace airlock::store
