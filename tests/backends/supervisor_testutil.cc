#include "backends/supervisor_testutil.h"

namespace tessera::testing {

SupervisorOptions OptionsIn(const std::filesystem::path& dir) {
  SupervisorOptions o;
  o.work_dir = dir.string();
  o.checkpoint_root = (dir / "ckpt").string();
  o.log_bytes = 64;
  o.allow_root_tasks = true;
  return o;
}

}  // namespace tessera::testing
