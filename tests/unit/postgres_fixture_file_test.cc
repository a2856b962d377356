// The file the ctest fixture's PostgreSQL server is found by
// (tests/support/postgres_server.h): what it says, and that nothing else passes.
#include <gtest/gtest.h>

#include "support/postgres_server.h"

using airlock::testing::parse_shared_server_file;
using airlock::testing::shared_server_file_text;

TEST(PostgresFixtureFile, TheWrittenLineReadsBackAsItsPort) {
  for (int port : {1, 5432, 65535}) {
    auto line = parse_shared_server_file(shared_server_file_text(port));
    ASSERT_TRUE(line) << line.error().message();
    EXPECT_EQ(line->port, port);
    EXPECT_TRUE(line->skip.empty());
  }
}

TEST(PostgresFixtureFile, ASkipLineCarriesItsReason) {
  auto line = parse_shared_server_file("skip: no PostgreSQL server\n");
  ASSERT_TRUE(line) << line.error().message();
  EXPECT_EQ(line->skip, "no PostgreSQL server");
  EXPECT_EQ(line->port, 0);
}

TEST(PostgresFixtureFile, AnythingElseIsAnErrorNotAServer) {
  for (const char* text : {"", "\n", "skip: ", "postgresql://airlock@127.0.0.1:",
                           "postgresql://airlock@127.0.0.1:0", "postgresql://airlock@127.0.0.1:65536",
                           "postgresql://airlock@127.0.0.1:54x32", "postgresql://airlock@127.0.0.1:-1",
                           "postgresql://airlock@10.0.0.1:5432", "postgresql://root@127.0.0.1:5432",
                           "postgresql://airlock@127.0.0.1:5432/db", " postgresql://airlock@127.0.0.1:5432"}) {
    auto line = parse_shared_server_file(text);
    EXPECT_FALSE(line) << "accepted: \"" << text << "\"";
    if (line) continue;
    EXPECT_NE(line.error().message().find("fixture server line"), std::string::npos) << line.error().message();
  }
}
