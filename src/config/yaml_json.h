// YAML to JSON, for what is written in YAML and sent or served as JSON (a job file submitted
// to the API, the OpenAPI document). Scalars are typed as YAML 1.2's core schema reads them:
// true/false, null, numbers; quoted scalars stay strings.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

namespace tessera {

nlohmann::ordered_json YamlToJson(const YAML::Node& node);

}  // namespace tessera
