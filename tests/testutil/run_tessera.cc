#include "testutil/run_tessera.h"

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

namespace tessera::testing {

namespace {

int Run(const std::string& cmd, std::string* out) {
  std::string dropped;
  if (out == nullptr) out = &dropped;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  out->clear();
  if (!pipe) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe.get())) > 0)
    out->append(buf, n);
  int status = pclose(pipe.release());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

int RunTessera(const std::string& args, std::string* out, bool with_stderr,
               const std::string& env) {
  return Run(
      env + std::string(TESSERA_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null"),
      out);
}

int RunShell(const std::string& command, std::string* out) {
  return Run(command + " 2>&1", out);
}

int CountOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace tessera::testing
