// YAML to JSON, for what is written in YAML and sent or served as JSON (a job file submitted
// to the API, the OpenAPI document). Scalars are typed as YAML 1.2's core schema reads them:
// true/false, null, numbers; quoted scalars stay strings. And configuration errors as JSON.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include "config/diagnostics.h"

namespace tessera {

nlohmann::ordered_json YamlToJson(const YAML::Node& node);

// Diagnostics as JSON, sorted: [{file, line, column, field, message}] (`tessera validate -o
// json`, the API's configuration checks).
nlohmann::ordered_json DiagnosticsJson(const Diagnostics& diagnostics);

}  // namespace tessera
