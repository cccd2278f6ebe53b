// The agent protocol's messages: what one side writes the other reads back, and malformed
// messages are refused naming the field.
#include "backends/local/protocol.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(TaskKey, ReadsItsOwnFormAndNothingElse) {
  TaskKey k{17, 2, 5};
  EXPECT_EQ(k.ToString(), "17.2.5");
  EXPECT_EQ(TaskKey::Parse("17.2.5"), k);
  for (const char* bad : {"", "17", "17.2", "17.2.5.1", "a.b.c", "-1.0.0", "1..2", "1.2.3x"}) {
    EXPECT_FALSE(TaskKey::Parse(bad).has_value()) << bad;
  }
}

TEST(SyncMessages, RoundTrip) {
  SyncRequest r;
  r.agent = "host-1-abc";
  r.address = "10.1.2.3";
  r.inventory.cpu = 8000;
  r.inventory.memory = 32768;
  r.inventory.gpus = {{0, "GPU-1", "NVIDIA L4", 23034, 0, 0.0}};
  r.telemetry.cpu_used = 1500;
  r.telemetry.gpus = {{0, "GPU-1", "NVIDIA L4", 23034, 1200, 0.37}};
  TaskReport t;
  t.key = {3, 0, 1};
  t.phase = TaskPhase::kExited;
  t.exit_code = 137;
  t.stopped = true;
  t.log = "bye\n";
  r.tasks = {t};
  r.known_version = 9;
  r.wait_ms = 2000;
  auto back = ReadSyncRequest(ToJson(r).dump());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->agent, "host-1-abc");
  EXPECT_EQ(back->inventory.gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(back->telemetry.gpus[0].utilization, 0.37);
  ASSERT_EQ(back->tasks.size(), 1u);
  EXPECT_EQ(back->tasks[0].key, t.key);
  EXPECT_EQ(back->tasks[0].phase, TaskPhase::kExited);
  EXPECT_EQ(back->tasks[0].exit_code, 137);
  EXPECT_TRUE(back->tasks[0].stopped);
  EXPECT_EQ(back->tasks[0].log, "bye\n");
  EXPECT_EQ(back->known_version, 9u);

  SyncAnswer a;
  a.epoch = "e1";
  a.version = 4;
  a.heartbeat_ms = 2000;
  a.run = {{{3, 1, 0},
            "train",
            {"/bin/sh", "-c", "echo hi"},
            {{"CUDA_VISIBLE_DEVICES", "0"}},
            "alice",
            "ml"}};
  a.stop = {{{3, 0, 0}, 30000}};
  a.acked = {{2, 0, 0}};
  auto ans = ReadSyncAnswer(ToJson(a).dump());
  ASSERT_TRUE(ans.ok()) << ans.status().ToString();
  EXPECT_EQ(ans->run[0].command[2], "echo hi");
  EXPECT_EQ(ans->run[0].env.at("CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_EQ(ans->run[0].run_as_user, "alice");
  EXPECT_EQ(ans->run[0].run_as_group, "ml");
  EXPECT_EQ(ans->stop[0].grace_ms, 30000);
  EXPECT_EQ(ans->acked[0].ToString(), "2.0.0");
}

TEST(SyncMessages, MalformedRequestsNameTheField) {
  struct Case {
    const char* body;
    const char* field;
  };
  const Case cases[] = {
      {R"({"agent":"a"})", "protocol"},
      {R"({"protocol":2,"agent":"a"})", "protocol"},
      {R"({"protocol":1})", "agent"},
      {R"({"protocol":1,"agent":""})", "agent"},
      {R"({"protocol":1,"agent":"a","surprise":1})", "surprise"},
      {R"({"protocol":1,"agent":"a","wait_ms":-1})", "wait_ms"},
      {R"({"protocol":1,"agent":"a","wait_ms":"soon"})", "wait_ms"},
      {R"({"protocol":1,"agent":"a","tasks":[{"key":"1.2","phase":"running"}]})", "tasks[0].key"},
      {R"({"protocol":1,"agent":"a","tasks":[{"key":"1.2.3","phase":"dancing"}]})",
       "tasks[0].phase"},
      {R"({"protocol":1,"agent":"a","telemetry":{"gpus":[{"uuid":"x"}]}})",
       "telemetry.gpus[0].index"},
      {R"({"protocol":1,"agent":"a","inventory":{"cpu":1,"disk":2}})", "inventory.disk"},
  };
  for (const Case& c : cases) {
    auto r = ReadSyncRequest(c.body);
    EXPECT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.status().field(), c.field) << c.body << ": " << r.status().ToString();
  }
  EXPECT_FALSE(ReadSyncRequest("{not json").ok());
  EXPECT_FALSE(ReadSyncRequest("[]").ok());
}

TEST(SyncMessages, MalformedAnswersAreRefused) {
  EXPECT_FALSE(ReadSyncAnswer(R"({"protocol":1,"epoch":"e","version":1})").ok());
  EXPECT_FALSE(ReadSyncAnswer(R"({"protocol":1,"epoch":"e","version":1,"heartbeat_ms":0})").ok());
  EXPECT_FALSE(ReadSyncAnswer(R"({"protocol":1,"epoch":"e","version":1,"heartbeat_ms":10,
      "run":[{"key":"1.0.0","command":[]}]})")
                   .ok());
  EXPECT_TRUE(ReadSyncAnswer(R"({"protocol":1,"epoch":"e","version":1,"heartbeat_ms":10})").ok());
}

}  // namespace
}  // namespace tessera
