// Two runs compared job by job (docs/simulation.md#comparing-two-runs): queueing over the jobs
// both started, per class; the jobs only one started counted; a bad log named by file and line.
#include "sim/compare.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera {
namespace {

std::string Start(const std::string& job, const std::string& cls, double submitted, double t) {
  return R"({"t_s":)" + std::to_string(t) + R"(,"kind":"start","job":")" + job +
         R"(","submitted_s":)" + std::to_string(submitted) + R"(,"class":")" + cls + "\"}\n";
}

TEST(CompareRuns, QueueingIsOverTheJobsBothStartedAndOnlyTheirFirstStart) {
  // a and b run in both; c only in base (the other run never started it), r0 is a replica.
  // In base, a is preempted and restarts later: only its first start counts.
  const std::string base = Start("a", "training", 0, 100) + Start("b", "batch", 10, 10) +
                           R"({"t_s":150.0,"kind":"preempt","job":"a"})"
                           "\n" +
                           Start("a", "training", 0, 900) + Start("c", "batch", 5, 5000) +
                           Start("svc/r0", "inference", 0, 0);
  const std::string other = Start("b", "batch", 10, 40) + Start("a", "training", 0, 20) +
                            Start("svc/r0", "inference", 0, 0);
  Result<nlohmann::ordered_json> doc = CompareDecisionLogs({"base", base}, {"other", other});
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const auto& d = *doc;
  EXPECT_EQ(d["jobs"]["base_started"], 3);
  EXPECT_EQ(d["jobs"]["other_started"], 2);
  EXPECT_EQ(d["jobs"]["both"], 2);
  EXPECT_EQ(d["jobs"]["only_base"], 1);
  EXPECT_EQ(d["jobs"]["only_other"], 0);
  EXPECT_EQ(d["queue_s"]["per_class"]["training"]["base"]["mean"], 100.0);
  EXPECT_EQ(d["queue_s"]["per_class"]["training"]["other"]["mean"], 20.0);
  EXPECT_EQ(d["queue_s"]["per_class"]["batch"]["base"]["mean"], 0.0);
  EXPECT_EQ(d["queue_s"]["per_class"]["batch"]["other"]["mean"], 30.0);
  EXPECT_EQ(d["queue_s"]["all"]["base"]["mean"], 50.0);
  EXPECT_EQ(d["queue_s"]["all"]["other"]["mean"], 25.0);
  EXPECT_FALSE(d["queue_s"]["per_class"].contains("inference"));
}

TEST(CompareRuns, ABadLineIsNamedByLogAndLine) {
  const std::string good = Start("a", "training", 0, 1);
  auto error = [&](const std::string& other) {
    Result<nlohmann::ordered_json> doc = CompareDecisionLogs({"b.jsonl", good}, {"o.jsonl", other});
    return doc.ok() ? std::string("ok") : doc.status().message();
  };
  EXPECT_EQ(error(good + "{not json\n"), "o.jsonl:2: not a JSON object");
  EXPECT_EQ(error(good + "[1,2]\n"), "o.jsonl:2: not a JSON object");
  EXPECT_EQ(error(R"({"t_s":1,"job":"a"})"
                  "\n"),
            "o.jsonl:1: no \"kind\"");
  EXPECT_EQ(error(R"({"t_s":1,"kind":"start","job":"a","class":"batch"})"
                  "\n"),
            "o.jsonl:1: a start without \"submitted_s\"");
  EXPECT_EQ(error(R"({"t_s":1,"kind":"start","job":7,"class":"batch","submitted_s":0})"
                  "\n"),
            "o.jsonl:1: a start without \"job\"");
  EXPECT_EQ(error(Start("a", "batch", 10, 5)), "o.jsonl:1: a start before its submission");
  EXPECT_EQ(error(""), "ok");
}

}  // namespace
}  // namespace tessera
