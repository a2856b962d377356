#include "store/checkpoint.h"

#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/json_parse.h"
#include "base/sha256.h"

namespace airlock::store {
namespace {

struct BioFree {
  void operator()(BIO* b) const { openssl_loaded().BIO_free(b); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { openssl_loaded().EVP_MD_CTX_free(c); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

constexpr size_t kSignatureBytes = 64;
constexpr size_t kMaxLineBytes = 4096;

Result<std::string> bio_text(BIO* bio) {
  char* data = nullptr;
  // BIO_get_mem_data(), a macro over BIO_ctrl().
  long n = openssl_loaded().BIO_ctrl(bio, BIO_CTRL_INFO, 0, reinterpret_cast<char*>(&data));
  if (n < 0 || data == nullptr) return fail("cannot read the PEM buffer");
  return std::string(data, static_cast<size_t>(n));
}

bool is_lower_hex(std::string_view s, size_t n) {
  if (s.size() != n) return false;
  for (char ch : s)
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
  return true;
}

Result<EvpKey> require_ed25519(EVP_PKEY* key, const char* what) {
  if (key == nullptr) return fail(std::string("not a PEM ") + what + " key");
  EvpKey owned(key);
  if (openssl_loaded().EVP_PKEY_get_id(key) != EVP_PKEY_ED25519)
    return fail(std::string("the ") + what + " key is not an Ed25519 key");
  return owned;
}

// OpenSSL for making or reading a key (the other functions take a key, so it
// is loaded already).
Result<const OpenSsl*> openssl_for_keys() {
  auto ssl = openssl();
  if (!ssl) return fail("checkpoint keys: " + ssl.error().message());
  return ssl;
}

}  // namespace

Result<EvpKey> generate_checkpoint_key() {
  auto ssl = openssl_for_keys();
  if (!ssl) return forward(ssl);
  EVP_PKEY* key = (*ssl)->EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (key == nullptr) return fail("cannot generate an Ed25519 key");
  return EvpKey(key);
}

Result<std::string> private_key_pem(EVP_PKEY* key) {
  const OpenSsl& ssl = openssl_loaded();  // `key` was made through it
  Bio bio(ssl.BIO_new(ssl.BIO_s_mem()));
  if (!bio ||
      ssl.PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1)
    return fail("cannot write the private key");
  return bio_text(bio.get());
}

Result<std::string> public_key_pem(EVP_PKEY* key) {
  const OpenSsl& ssl = openssl_loaded();
  Bio bio(ssl.BIO_new(ssl.BIO_s_mem()));
  if (!bio || ssl.PEM_write_bio_PUBKEY(bio.get(), key) != 1)
    return fail("cannot write the public key");
  return bio_text(bio.get());
}

Result<EvpKey> read_private_key_pem(std::string_view pem) {
  auto ssl = openssl_for_keys();
  if (!ssl) return forward(ssl);
  Bio bio((*ssl)->BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return fail("cannot read the key");
  return require_ed25519((*ssl)->PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr),
                         "private");
}

Result<EvpKey> read_public_key_pem(std::string_view pem) {
  if (pem.find("PRIVATE KEY-----") != std::string_view::npos) return read_private_key_pem(pem);
  auto ssl = openssl_for_keys();
  if (!ssl) return forward(ssl);
  Bio bio((*ssl)->BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return fail("cannot read the key");
  return require_ed25519((*ssl)->PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr),
                         "public");
}

Result<std::string> checkpoint_key_id(EVP_PKEY* key) {
  unsigned char raw[32];
  size_t n = sizeof raw;
  if (openssl_loaded().EVP_PKEY_get_raw_public_key(key, raw, &n) != 1 || n != sizeof raw)
    return fail("cannot read the raw public key");
  return Sha256::of(std::string_view(reinterpret_cast<const char*>(raw), n)).substr(0, 16);
}

std::string checkpoint_signed_bytes(const Checkpoint& c) {
  return "airlock-checkpoint-v1\n" + c.tenant_id + "\n" + std::to_string(c.seq) + "\n" +
         c.head_hash + "\n" + c.time + "\n" + c.key_id;
}

Result<std::string> sign_with_checkpoint_key(std::string_view bytes, EVP_PKEY* private_key) {
  const OpenSsl& ssl = openssl_loaded();
  MdCtx ctx(ssl.EVP_MD_CTX_new());
  unsigned char sig[kSignatureBytes];
  size_t sig_len = sizeof sig;
  if (!ctx || ssl.EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, private_key) != 1 ||
      ssl.EVP_DigestSign(ctx.get(), sig, &sig_len,
                         reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()) != 1)
    return fail("cannot sign (is the key an Ed25519 private key?)");
  return base64_encode(std::string_view(reinterpret_cast<const char*>(sig), sig_len));
}

Status verify_checkpoint_key_signature(std::string_view bytes, std::string_view signature,
                                       EVP_PKEY* public_key, std::string_view what) {
  auto sig = base64_decode(signature);
  if (!sig || sig->size() != kSignatureBytes) return fail("signature is not 64 bytes of base64");
  const OpenSsl& ssl = openssl_loaded();
  MdCtx ctx(ssl.EVP_MD_CTX_new());
  if (!ctx || ssl.EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, public_key) != 1)
    return fail("cannot set up the signature check");
  int ok = ssl.EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig->data()),
                                sig->size(), reinterpret_cast<const unsigned char*>(bytes.data()),
                                bytes.size());
  if (ok != 1)
    return fail(ErrorKind::kRefused,
                "bad signature: " + std::string(what) + " was changed or not signed by this key");
  return {};
}

Result<std::string> make_checkpoint_line(Checkpoint c, EVP_PKEY* private_key) {
  auto id = checkpoint_key_id(private_key);
  if (!id) return forward(id);
  c.key_id = *id;
  auto sig = sign_with_checkpoint_key(checkpoint_signed_bytes(c), private_key);
  if (!sig) return fail("cannot sign the checkpoint (is the key an Ed25519 private key?)");
  nlohmann::ordered_json j;
  j["tenant"] = c.tenant_id;
  j["seq"] = c.seq;
  j["head"] = c.head_hash;
  j["time"] = c.time;
  j["key_id"] = c.key_id;
  j["sig"] = *sig;
  return j.dump();
}

Result<Checkpoint> parse_checkpoint_line(std::string_view line) {
  if (line.size() > kMaxLineBytes) return fail("checkpoint line too long");
  auto j = parse_json_or_discarded(line, 4);
  if (!j.is_object()) return fail("checkpoint line is not a JSON object");
  auto text = [&](const char* name, std::string& out) -> Status {
    auto it = j.find(name);
    if (it == j.end() || !it->is_string()) return fail(std::string("checkpoint has no string \"") + name + "\"");
    out = it->get<std::string>();
    return {};
  };
  Checkpoint c;
  for (auto [name, field] : {std::pair{"tenant", &c.tenant_id}, {"head", &c.head_hash},
                             {"time", &c.time}, {"key_id", &c.key_id}, {"sig", &c.signature}})
    if (auto st = text(name, *field); !st) return std::unexpected(st.error());
  auto seq = j.find("seq");
  if (seq == j.end() || !seq->is_number_integer() || seq->get<int64_t>() < 1)
    return fail("checkpoint has no positive integer \"seq\"");
  c.seq = seq->get<int64_t>();
  if (c.tenant_id.empty() || c.tenant_id.find('\n') != std::string::npos)
    return fail("checkpoint tenant is empty or has a newline");
  if (c.time.find('\n') != std::string::npos) return fail("checkpoint time has a newline");
  if (!is_lower_hex(c.head_hash, 64)) return fail("checkpoint head is not 64 lower-case hex");
  if (!is_lower_hex(c.key_id, 16)) return fail("checkpoint key_id is not 16 lower-case hex");
  return c;
}

Status verify_checkpoint(const Checkpoint& c, EVP_PKEY* public_key) {
  auto id = checkpoint_key_id(public_key);
  if (!id) return std::unexpected(id.error());
  if (*id != c.key_id) return fail("signed by key " + c.key_id + ", not by the given key " + *id);
  return verify_checkpoint_key_signature(checkpoint_signed_bytes(c), c.signature, public_key,
                                         "the checkpoint");
}

std::string checkpoint_mismatch(const Checkpoint& c, const std::optional<std::string>& hash_now,
                                bool removed_by_retention) {
  std::string who = "tenant " + c.tenant_id + ": checkpoint at seq " + std::to_string(c.seq) + " (" +
                    c.time + "): ";
  if (!hash_now) {
    // Retention removing old records is normal; what it removed cannot be compared.
    if (removed_by_retention) return "";
    return who + "no record at that seq now: records up to seq " + std::to_string(c.seq) +
           " were removed or rewritten";
  }
  if (*hash_now != c.head_hash)
    return who + "the chain's hash there differs: records at or before seq " +
           std::to_string(c.seq) + " were rewritten";
  return "";
}

}  // namespace airlock::store
