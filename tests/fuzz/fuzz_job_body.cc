// Fuzzes the API's submission parsing (POST /v1/jobs and POST /v1/services): any body must
// give either a job (a service) or diagnostics naming a line and field, never a crash, hang or
// sanitizer report. Each body is read both ways against the enterprise example, as
// `tessera serve --config examples/enterprise` reads it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "config/loader.h"

namespace {

const tessera::Spec& Enterprise() {
  static const tessera::Spec spec = [] {
    tessera::LoadResult r = tessera::LoadSpecFiles({TESSERA_EXAMPLES "/enterprise"});
    if (!r.spec) std::abort();
    return *r.spec;
  }();
  return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string body(reinterpret_cast<const char*>(data), size);
  tessera::JobLoad r = tessera::LoadJobText(Enterprise(), {"body", body});
  if (r.job.has_value() != r.diagnostics.empty()) std::abort();
  for (const tessera::Diagnostic& d : r.diagnostics.items()) {
    if (d.message.empty()) std::abort();
  }
  tessera::ServiceLoad v = tessera::LoadServiceText(Enterprise(), {"body", body});
  if (v.service.has_value() != v.diagnostics.empty()) std::abort();
  for (const tessera::Diagnostic& d : v.diagnostics.items()) {
    if (d.message.empty()) std::abort();
  }
  return 0;
}
