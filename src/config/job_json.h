// A job's resolved form: every field of the model's Job as JSON, with names in place of ids.
// The daemon stores it beside the submission as received, and reads it back on restart
// without YAML and without the capacity checks a submission went through — an order of
// magnitude faster than parsing the submission again (docs/serve.md#the-store-and-restarts).
// The names are resolved again against the configuration of the day: a tenant, model, dataset,
// region or priority class that no longer exists is an error naming it.
//
// Thread-safety: ResolvedJobReader is immutable after construction; Read may run on any thread.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "model/spec.h"

namespace tessera {

nlohmann::json ResolvedJobJson(const Spec& spec, const Job& job);

class ResolvedJobReader {
 public:
  explicit ResolvedJobReader(const Spec& spec);
  Result<Job> Read(std::string_view text) const;

 private:
  Result<Job> FromJson(const nlohmann::json& j) const;

  const Spec& spec_;
  std::map<std::string, uint32_t, std::less<>> tenants_, models_, datasets_, regions_;
};

}  // namespace tessera
