// Loading a Spec from YAML. All-or-nothing: either every file parses and validates and the
// caller gets the whole Spec, or it gets every error found (each naming file:line:column and
// the field path) and no Spec. Nothing is ever half-loaded.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/diagnostics.h"
#include "model/spec.h"

namespace tessera {

struct LoadResult {
  std::optional<Spec> spec;  // set iff diagnostics is empty
  Diagnostics diagnostics;
};

struct SourceText {
  std::string name;  // shown in diagnostics, usually the file path
  std::string text;
};

// Loads files; a directory stands for the *.yaml / *.yml files in it, in name order.
LoadResult LoadSpecFiles(const std::vector<std::string>& paths);
// Loads in-memory texts (tests, fuzzing, API bodies).
LoadResult LoadSpecTexts(const std::vector<SourceText>& sources);

// One job, as a submission carries it (the job object of a `jobs:` list, as YAML or JSON),
// checked against a loaded configuration: its references (tenant, models, datasets, priority)
// must name what `context` declares and its request must fit `context`'s fleet. Diagnostics
// name `body.name`, the line and column, and the field path within the job.
struct JobLoad {
  std::optional<Job> job;  // set iff diagnostics is empty
  Diagnostics diagnostics;
};
JobLoad LoadJobText(const Spec& context, const SourceText& body);

// One service, as a submission carries it (the service object of a `services:` list), checked
// against `context` like a job; diagnostics name the field path within the service.
struct ServiceLoad {
  std::optional<Service> service;  // set iff diagnostics is empty
  Diagnostics diagnostics;
};
ServiceLoad LoadServiceText(const Spec& context, const SourceText& body);

}  // namespace tessera
