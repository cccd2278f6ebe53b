// Fuzzes the agent protocol's readers (what an agent sends the daemon, what the daemon answers):
// any bytes give a message or an error naming the field, never a crash, hang or sanitizer
// report; a message read back writes and reads back the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "backends/local/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string body(reinterpret_cast<const char*>(data), size);
  auto req = tessera::ReadSyncRequest(body);
  if (req.ok()) {
    auto again = tessera::ReadSyncRequest(tessera::ToJson(*req).dump());
    if (!again.ok() || again->tasks.size() != req->tasks.size() || again->agent != req->agent) {
      std::abort();
    }
  }
  auto answer = tessera::ReadSyncAnswer(body);
  if (answer.ok()) {
    auto again = tessera::ReadSyncAnswer(tessera::ToJson(*answer).dump());
    if (!again.ok() || again->run.size() != answer->run.size()) std::abort();
  }
  return 0;
}
