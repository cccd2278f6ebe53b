// A job's resolved form reads back as the same job, and names that left the configuration
// are errors naming them.
#include "config/job_json.h"

#include <gtest/gtest.h>

#include "config/loader.h"

namespace tessera {
namespace {

const Spec& Enterprise() {
  static const Spec spec = [] {
    LoadResult r = LoadSpecFiles({std::string(TESSERA_SOURCE_DIR) + "/examples/enterprise"});
    EXPECT_TRUE(r.spec.has_value()) << r.diagnostics.ToString();
    return *r.spec;
  }();
  return spec;
}

TEST(ResolvedJob, EveryExampleJobReadsBackTheSame) {
  const Spec& spec = Enterprise();
  ASSERT_FALSE(spec.jobs.empty());
  ResolvedJobReader reader(spec);
  for (const Job& job : spec.jobs) {
    nlohmann::json first = ResolvedJobJson(spec, job);
    auto back = reader.Read(first.dump());
    ASSERT_TRUE(back.ok()) << job.name << ": " << back.status().ToString();
    EXPECT_EQ(ResolvedJobJson(spec, *back), first) << job.name;
    EXPECT_EQ(back->TaskCount(), job.TaskCount()) << job.name;
    EXPECT_EQ(back->tenant, job.tenant) << job.name;
    EXPECT_EQ(back->runtime, job.runtime) << job.name;
    EXPECT_EQ(back->deadline, job.deadline) << job.name;
    EXPECT_EQ(back->datasets, job.datasets) << job.name;
  }
}

TEST(ResolvedJob, ANameTheConfigurationNoLongerHasIsAnErrorNamingIt) {
  const Spec& spec = Enterprise();
  ResolvedJobReader reader(spec);
  nlohmann::json j = ResolvedJobJson(spec, spec.jobs.front());
  j["tenant"] = "gone/team";
  auto r = reader.Read(j.dump());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("tenant \"gone/team\""), std::string::npos)
      << r.status().message();
  j = ResolvedJobJson(spec, spec.jobs.front());
  j["priority"] = "urgent-ish";
  EXPECT_FALSE(reader.Read(j.dump()).ok());
  for (const char* bad : {"", "[]", "{}", R"({"name": 3})"})
    EXPECT_FALSE(reader.Read(bad).ok()) << bad;
}

}  // namespace
}  // namespace tessera
