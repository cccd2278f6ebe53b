// The daemons a client talks to (common/server_list.h): the list as given, and where a client
// goes when one fails — never to an address outside the list, whatever an answer names.
#include "common/server_list.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(ServerList, AListIsParsedAndEveryEntryMustBeHttp) {
  auto one = ServerList::Parse("http://a:7400/", "--server");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->urls(), std::vector<std::string>{"http://a:7400"});
  auto two = ServerList::Parse("http://a:7400,https://b:7400", "--server");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->size(), 2u);
  EXPECT_EQ(two->Current(), "http://a:7400");
  for (const char* bad : {"", "a:7400", "http://a:7400,", "http://a:7400,ftp://b", ",http://a"}) {
    auto parsed = ServerList::Parse(bad, "--server");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("--server"), std::string::npos);
  }
}

TEST(ServerList, AFailureMovesToTheLeaderNamedInTheListElseToTheNext) {
  auto list = ServerList::Parse("http://a:1,http://b:2,http://c:3", "--server");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->Failed("http://a:1"), "http://b:2");
  EXPECT_EQ(list->Failed("http://b:2", "http://a:1/"), "http://a:1");  // the leader, listed
  EXPECT_EQ(list->Failed("http://x:9"), "http://a:1");  // another thread moved on already
  EXPECT_EQ(list->Failed("http://a:1"), "http://b:2");
  EXPECT_EQ(list->Failed("http://b:2"), "http://c:3");
  EXPECT_EQ(list->Failed("http://c:3"), "http://a:1");  // round again
}

TEST(ServerList, ALeaderOutsideTheListIsNeverFollowed) {
  // A daemon that is not ours names an address of its own: the caller's token must not go
  // there; the next daemon of the list is tried instead.
  auto list = ServerList::Parse("http://a:1,http://b:2", "--server");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->Failed("http://a:1", "http://evil:80"), "http://b:2");
  EXPECT_EQ(list->Current(), "http://b:2");
  EXPECT_EQ(list->Failed("http://b:2", "https://b:2.evil"), "http://a:1");
}

}  // namespace
}  // namespace tessera
