// The API's description (docs/api/openapi.yaml), built into the binary and served as JSON at
// /openapi.json.
#pragma once

#include <string>

namespace tessera {

// The YAML document as written in docs/api/openapi.yaml.
const char* OpenApiYaml();
// The same as JSON (converted once).
const std::string& OpenApiJson();

}  // namespace tessera
