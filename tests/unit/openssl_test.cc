// OpenSSL's TLS and public-key half is loaded on first use (base/openssl.h):
// it loads, and a library that is missing or is not OpenSSL is a clear error.
#include "base/openssl.h"

#include <gtest/gtest.h>

namespace airlock {
namespace {

TEST(OpenSslLoader, LoadsTheFunctionsOnceAndTheyWork) {
  auto first = openssl();
  ASSERT_TRUE(first.has_value()) << first.error().message();
  auto again = openssl();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*first, *again) << "loaded once per process";
  const OpenSsl& ssl = **first;
  SSL_CTX* ctx = ssl.SSL_CTX_new(ssl.TLS_client_method());
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(ssl.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, nullptr), 1);
  ssl.SSL_CTX_free(ctx);
}

TEST(OpenSslLoader, AMissingLibraryIsAClearError) {
  auto none = load_openssl("libairlock-no-such-ssl.so.3");
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message().find(
                "load libairlock-no-such-ssl.so.3 (OpenSSL 3, package libssl3): "),
            std::string::npos)
      << none.error().message();
}

TEST(OpenSslLoader, ALibraryThatIsNotOpenSslIsAClearError) {
  auto wrong = load_openssl("libm.so.6");
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().message(), "libm.so.6 has no function ERR_get_error");
}

}  // namespace
}  // namespace airlock
