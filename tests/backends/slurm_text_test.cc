// What the Slurm backend reads from squeue and sinfo, and the batch script it submits: as Slurm
// 22.05 prints and reads them.
#include "backends/slurm/slurm_text.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(SqueueJson, JobsWithTheirStatesAndExitStatus) {
  auto jobs = ParseSqueueJson(R"({"meta": {}, "errors": [], "jobs": [
      {"job_id": 3, "name": "tessera-7-0", "job_state": "FAILED", "exit_code": 768,
       "nodes": "east-gpu-[0000-0001]"},
      {"job_id": 4, "name": "tessera-8-1", "job_state": "FAILED", "exit_code": 9},
      {"job_id": 5, "name": "job.sh", "job_state": "RUNNING", "exit_code": 0}]})");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0].exit_code, 3);    // a wait status: exit 3
  EXPECT_EQ((*jobs)[1].exit_code, 137);  // killed by signal 9
  EXPECT_EQ((*jobs)[0].nodes, "east-gpu-[0000-0001]");
  std::optional<SlurmEnd> failed = SlurmOutcome((*jobs)[0]);
  ASSERT_TRUE(failed.has_value());
  EXPECT_FALSE(failed->succeeded);
  EXPECT_EQ(failed->detail, "Slurm job 3 FAILED (exit 3)");
  EXPECT_FALSE(SlurmOutcome((*jobs)[2]).has_value());  // running
  std::optional<SlurmEnd> done = SlurmOutcome({1, "t", "COMPLETED", 0, ""});
  ASSERT_TRUE(done.has_value());
  EXPECT_TRUE(done->succeeded);
  std::optional<SlurmEnd> exited = SlurmOutcome({1, "t", "COMPLETED", 2, ""});
  ASSERT_TRUE(exited.has_value());
  EXPECT_FALSE(exited->succeeded);
  EXPECT_FALSE(SlurmOutcome({1, "t", "CANCELLED", 0, ""}).has_value());
  EXPECT_FALSE(SlurmOutcome({1, "t", "NODE_FAIL", 0, ""}).has_value());
}

TEST(SqueueJson, AnUnreachableControllerIsAnErrorNotAnEmptyQueue) {
  // squeue's answer (exit status 0) when slurmctld does not answer.
  auto jobs = ParseSqueueJson(R"({"errors": [{"description": "Failed while looking for jobs",
      "error_number": -1, "error": "Unspecified error", "source": "slurm_load_jobs"}],
      "jobs": []})");
  ASSERT_FALSE(jobs.ok());
  EXPECT_EQ(jobs.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(jobs.status().message().find("Failed while looking for jobs"), std::string::npos);
  EXPECT_FALSE(ParseSqueueJson("squeue: error: slurm_load_jobs").ok());
  EXPECT_FALSE(ParseSqueueJson(R"({"jobs": [{"job_id": "x"}]})").ok());
  EXPECT_FALSE(ParseSqueueJson(R"({"jobs": {}})").ok());
  // An error whose fields are not text is still an error (found by fuzzing: it threw).
  auto odd = ParseSqueueJson(R"({"errors": [{"description": 5, "source": []}], "jobs": []})");
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().message(), "squeue: an error");
}

TEST(Sinfo, NodeStatesAndWhichTakeWork) {
  auto nodes = ParseSinfoNodes(
      "east-0|idle|64|512000|gpu:8\neast-1|down*|64|512000|gpu:a100:4(S:0-1),gpu:t4:2,shard:8\n"
      "east-2|mixed|8|1000|(null)\neast-3|drained\n");
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  EXPECT_EQ(nodes->at("east-1").state, "down*");
  EXPECT_EQ(nodes->at("east-0").cpus, 64);
  EXPECT_EQ(nodes->at("east-0").memory_mb, 512000);
  EXPECT_EQ(nodes->at("east-0").gpus, 8);
  EXPECT_EQ(nodes->at("east-1").gpus, 6);
  EXPECT_EQ(nodes->at("east-2").gpus, -1);
  EXPECT_EQ(nodes->at("east-3").cpus, -1);
  EXPECT_TRUE(SlurmNodeUsable("idle"));
  EXPECT_TRUE(SlurmNodeUsable("mixed"));
  EXPECT_TRUE(SlurmNodeUsable("allocated"));
  for (const char* s : {"down*", "down", "drained", "draining", "idle*", "fail", "unknown"})
    EXPECT_FALSE(SlurmNodeUsable(s)) << s;
  EXPECT_FALSE(ParseSinfoNodes("no bar here\n").ok());
  EXPECT_FALSE(ParseSinfoNodes("n1||4\n").ok());
}

TEST(SlurmJobName, RoundTripAndOthersAreNotOurs) {
  EXPECT_EQ(SlurmJobName(17, 2), "tessera-17-2");
  std::optional<SlurmRunName> ours = ParseSlurmJobName("tessera-17-2");
  ASSERT_TRUE(ours.has_value());
  EXPECT_EQ(ours->job, 17);
  EXPECT_EQ(ours->run, 2);
  EXPECT_FALSE(ours->task.has_value());
  // An elastic run's task submitted alone.
  EXPECT_EQ(SlurmJobName(17, 2, 5), "tessera-17-2-t5");
  std::optional<SlurmRunName> part = ParseSlurmJobName("tessera-17-2-t5");
  ASSERT_TRUE(part.has_value());
  EXPECT_EQ(part->job, 17);
  EXPECT_EQ(part->run, 2);
  EXPECT_EQ(part->task, 5);
  for (const char* other : {"job.sh", "tessera-17", "tessera-x-1", "tessera-17-2x", "tessera--1",
                            "tessera-0-1", "tessera-17-2-t", "tessera-17-2-tx", "tessera-17-2-t-1"})
    EXPECT_FALSE(ParseSlurmJobName(other).has_value()) << other;
}

TEST(BuildSubmission, OneAllocationOnTheChosenNodesWithEachTasksIndex) {
  RunOrder o;
  o.job = 9;
  o.run = 1;
  o.job_name = "it's";
  o.command = {"python", "train.py", "--name", "a b"};
  o.env = {{"MODE", "fast"}};
  o.tasks = {{0, "west-1", {0, 1}, "CUDA_VISIBLE_DEVICES", 1000, "", ""},
             {1, "west-0", {0, 1}, "CUDA_VISIBLE_DEVICES", 1000, "", ""}};
  SlurmSubmission s =
      BuildSubmission(o, {{1500, 4096, 2}, {1500, 4096, 2}}, "gpu", "/w", "/ckpt", std::nullopt);
  auto has = [&](const std::string& a) {
    return std::find(s.args.begin(), s.args.end(), a) != s.args.end();
  };
  EXPECT_TRUE(has("--job-name=tessera-9-1"));
  EXPECT_TRUE(has("--nodes=2"));
  EXPECT_TRUE(has("--nodelist=west-1,west-0"));
  EXPECT_TRUE(has("--ntasks-per-node=1"));
  EXPECT_TRUE(has("--cpus-per-task=2"));  // 1.5 CPUs, rounded up
  EXPECT_TRUE(has("--mem=4096M"));
  EXPECT_TRUE(has("--gpus-per-task=2"));
  EXPECT_TRUE(has("--partition=gpu"));
  EXPECT_TRUE(has("--no-requeue"));
  // Task 0 runs on west-1, task 1 on west-0, whatever Slurm's ranks.
  EXPECT_NE(s.script.find("west-1:0) i=0;;"), std::string::npos) << s.script;
  EXPECT_NE(s.script.find("west-0:0) i=1;;"), std::string::npos) << s.script;
  EXPECT_NE(s.script.find("export TESSERA_JOB='it'\\''s'"), std::string::npos) << s.script;
  EXPECT_NE(s.script.find("export TESSERA_PEERS='west-1,west-0'"), std::string::npos);
  EXPECT_NE(s.script.find("export TESSERA_RESTART_COUNT='1'"), std::string::npos);
  EXPECT_NE(s.script.find("export MODE='fast'"), std::string::npos);
  EXPECT_NE(s.script.find(" 'python' 'train.py' '--name' 'a b'\n"), std::string::npos) << s.script;
}

TEST(BuildSubmission, SeveralTasksOnANodeHaveLocalRanks) {
  RunOrder o;
  o.job = 2;
  o.command = {"true"};
  o.tasks = {{0, "n0", {}, "", 1000, "", ""},
             {1, "n0", {}, "", 1000, "", ""},
             {2, "n1", {}, "", 1000, "", ""}};
  SlurmSubmission s = BuildSubmission(o, {{1000, 0, 0}, {1000, 0, 0}, {1000, 0, 0}}, "", "/w", "/c",
                                      Millis{90 * 1000});
  EXPECT_NE(std::find(s.args.begin(), s.args.end(), "--ntasks-per-node=2"), s.args.end());
  EXPECT_NE(std::find(s.args.begin(), s.args.end(), "--time=2"), s.args.end());
  EXPECT_EQ(std::find(s.args.begin(), s.args.end(), "--gpus-per-task=0"), s.args.end());
  EXPECT_NE(s.script.find("n0:1) i=1;;"), std::string::npos);
  EXPECT_NE(s.script.find("n1:0) i=2;;"), std::string::npos);
  EXPECT_NE(s.script.find("*) exit 0;;"), std::string::npos);  // n1's second slot is idle
}

}  // namespace
}  // namespace tessera
