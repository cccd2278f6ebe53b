// One job checked against a loaded configuration: what an API submission's body goes through.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "config/job_json.h"
#include "config/loader.h"
#include "config/yaml_json.h"
#include "testutil/spec_fixture.h"

namespace tessera {
namespace {

const Spec& Base() {
  static const Spec spec = [] {
    LoadResult r = testing::LoadWithBase("");
    EXPECT_TRUE(r.spec.has_value()) << r.diagnostics.ToString();
    return *r.spec;
  }();
  return spec;
}

TEST(JobBody, AJsonJobResolvesAgainstTheConfiguration) {
  JobLoad r = LoadJobText(Base(), {"body", R"({"name": "train-1", "class": "training",
    "tenant": "acme/research/llm", "runtime": "2h",
    "taskGroups": [{"name": "w", "count": 2, "cpu": 8, "memory": "64Gi",
                    "devices": {"count": 8, "models": ["H800"]}}]})"});
  ASSERT_TRUE(r.job.has_value()) << r.diagnostics.ToString();
  EXPECT_EQ(r.job->name, "train-1");
  EXPECT_EQ(Base().tenants[r.job->tenant.value()].path, "acme/research/llm");
  EXPECT_EQ(r.job->TaskCount(), 2);
  EXPECT_EQ(Base().model(r.job->task_groups[0].request.devices.models[0].model).name, "H800");
  EXPECT_EQ(r.job->runtime, Millis{2 * 3600 * 1000});
}

// A JSON body is read by nlohmann's parser into the nodes the parsers take (the YAML scanner is
// several times slower); a body prefixed with a YAML comment is not JSON, so the YAML reader
// takes it. Both must give the same job, for every job of the enterprise example.
TEST(JobBody, AJsonBodyAndTheSameBodyReadAsYamlGiveTheSameJob) {
  LoadResult enterprise = LoadSpecFiles({std::string(TESSERA_SOURCE_DIR) + "/examples/enterprise"});
  ASSERT_TRUE(enterprise.spec.has_value()) << enterprise.diagnostics.ToString();
  const Spec& spec = *enterprise.spec;
  YAML::Node file =
      YAML::LoadFile(std::string(TESSERA_SOURCE_DIR) + "/examples/enterprise/jobs.yaml");
  std::vector<std::string> bodies;
  for (const YAML::Node& job : file["jobs"])
    bodies.push_back(YamlToJson(job).dump());
  // Numbers as JSON writes them in other ways: keep their text, as the YAML reader does.
  bodies.push_back(R"({"name":"n","class":"batch","tenant":"consumer/ads/ctr","priority":7,)"
                   R"("taskGroups":[{"count":2,"cpu":1.50,"memory":"1Gi"}],"runtime":"1e2s"})");
  ASSERT_GE(bodies.size(), 10u);
  for (const std::string& body : bodies) {
    JobLoad json = LoadJobText(spec, {"body", body});
    JobLoad yaml = LoadJobText(spec, {"body", "# read as YAML\n" + body});
    ASSERT_EQ(json.job.has_value(), yaml.job.has_value())
        << body << "\n"
        << json.diagnostics.ToString() << yaml.diagnostics.ToString();
    if (!json.job) {
      EXPECT_EQ(json.diagnostics.ToString().size(), yaml.diagnostics.ToString().size()) << body;
      continue;
    }
    EXPECT_EQ(ResolvedJobJson(spec, *json.job), ResolvedJobJson(spec, *yaml.job)) << body;
  }
}

TEST(JobBody, AJsonBodysErrorsStillNameTheirLine) {
  // Two values for one field, and an unknown field: the JSON reader keeps both keys, the
  // parsers refuse them, and the YAML reader says where.
  JobLoad r = LoadJobText(Base(), {"body", R"({"name": "a", "class": "batch",
 "name": "b", "tenant": "acme/prod", "taskGroups": [{"cpu": 1, "memory": "1Gi"}],
 "colour": "red"})"});
  EXPECT_FALSE(r.job.has_value());
  std::string text = r.diagnostics.ToString();
  EXPECT_NE(text.find("body:2:"), std::string::npos) << text;
  EXPECT_NE(text.find("duplicate key \"name\""), std::string::npos) << text;
  EXPECT_NE(text.find("body:3:"), std::string::npos) << text;
  EXPECT_NE(text.find("colour"), std::string::npos) << text;
}

TEST(JobBody, ErrorsNameTheLineAndTheFieldWithinTheJob) {
  JobLoad r = LoadJobText(Base(), {"body", R"({"name": "x", "class": "training",
 "tenant": "acme/research/llm", "colour": "red",
 "taskGroups": [{"cpu": 8, "memory": "64Gi", "devices": {"count": 8, "models": ["H900"]}}]})"});
  EXPECT_FALSE(r.job.has_value());
  std::string text = r.diagnostics.ToString();
  EXPECT_NE(text.find("body:2:"), std::string::npos) << text;
  EXPECT_NE(text.find("colour"), std::string::npos) << text;
  EXPECT_NE(text.find("unknown device model \"H900\""), std::string::npos) << text;
}

TEST(JobBody, ARequestNoNodeCanHoldIsRefused) {
  JobLoad r = LoadJobText(Base(), {"body", R"({"name": "big", "class": "batch",
    "tenant": "acme/prod", "taskGroups": [{"cpu": 8, "memory": "64Gi",
    "devices": {"count": 16, "models": ["H800"]}}]})"});
  EXPECT_FALSE(r.job.has_value());
  EXPECT_NE(r.diagnostics.ToString().find("impossible request"), std::string::npos)
      << r.diagnostics.ToString();
}

TEST(JobBody, NamesThatCouldEscapeAPathAreRefused) {
  for (const char* name : {"../etc", "a/b", ".hidden", ""}) {
    JobLoad r = LoadJobText(Base(), {"body", std::string(R"({"name": ")") + name +
                                                 R"(", "class": "batch", "tenant": "acme/prod",
      "taskGroups": [{"cpu": 1, "memory": "1Gi"}]})"});
    EXPECT_FALSE(r.job.has_value()) << name;
  }
}

TEST(JobBody, NotAMappingOrNotYamlAtAll) {
  for (const char* body : {"[1, 2]", "{\"name\": ", "42", ""}) {
    JobLoad r = LoadJobText(Base(), {"body", body});
    EXPECT_FALSE(r.job.has_value()) << body;
    EXPECT_FALSE(r.diagnostics.empty()) << body;
  }
}

TEST(ServiceBody, AJsonServiceResolvesAgainstTheConfiguration) {
  ServiceLoad r = LoadServiceText(Base(), {"body", R"({"name": "chat", "tenant": "acme/prod",
    "priority": "high", "replicas": {"min": 1, "max": 4},
    "replica": {"cpu": 8, "memory": "64Gi", "devices": {"count": 1, "models": ["H800"]}},
    "latencySLO": "500ms", "serviceTime": "100ms",
    "userRegions": [{"region": "east", "weight": 1}],
    "load": {"peakRps": 100, "rpsPerReplica": 25, "curve": "flat"}})"});
  ASSERT_TRUE(r.service.has_value()) << r.diagnostics.ToString();
  EXPECT_EQ(r.service->name, "chat");
  EXPECT_EQ(Base().tenants[r.service->tenant.value()].path, "acme/prod");
  EXPECT_EQ(r.service->max_replicas, 4);
  EXPECT_EQ(r.service->latency_slo, 500);
  EXPECT_EQ(Base().region(r.service->user_regions.at(0).region).name, "east");
  EXPECT_EQ(r.service->load.rps_per_replica, 25000);
}

TEST(ServiceBody, ErrorsNameTheLineAndTheFieldWithinTheService) {
  ServiceLoad r = LoadServiceText(Base(), {"body", R"({"name": "chat", "tenant": "acme/prod",
    "replicas": {"min": 5, "max": 4}, "speed": 3,
    "replica": {"cpu": 8, "memory": "64Gi", "devices": {"count": 1, "models": ["H900"]}},
    "latencySLO": "500ms"})"});
  EXPECT_FALSE(r.service.has_value());
  std::string text = r.diagnostics.ToString();
  EXPECT_NE(text.find("body:2:"), std::string::npos) << text;
  EXPECT_NE(text.find("body:2:25: replicas.min: min (5) must not exceed max (4)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("speed"), std::string::npos) << text;
  EXPECT_NE(text.find("unknown device model \"H900\""), std::string::npos) << text;
}

TEST(ServiceBody, NamesThatCouldEscapeAPathAreRefused) {
  for (const char* name : {"../etc", "a/b", ".hidden", ""}) {
    ServiceLoad r = LoadServiceText(Base(), {"body", std::string(R"({"name": ")") + name +
                                                         R"(", "tenant": "acme/prod",
      "replicas": {"min": 1, "max": 1}, "replica": {"cpu": 1, "memory": "1Gi"},
      "latencySLO": "1s"})"});
    EXPECT_FALSE(r.service.has_value()) << name;
  }
}

}  // namespace
}  // namespace tessera
