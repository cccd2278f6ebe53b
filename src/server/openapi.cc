#include "server/openapi.h"

#include "config/yaml_json.h"

namespace tessera {

const std::string& OpenApiJson() {
  static const std::string kJson = YamlToJson(YAML::Load(OpenApiYaml())).dump();
  return kJson;
}

}  // namespace tessera
