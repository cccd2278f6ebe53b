#include "backends/local/containment.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>
#include <vector>

namespace tessera {

namespace {

constexpr const char* kIdentityVar = "TESSERA_AGENT_ID=";
constexpr const char* kKeyVar = "TESSERA_TASK_KEY=";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The pids listed in a cgroup's cgroup.procs (none when it does not exist).
std::vector<pid_t> ProcsOf(const std::string& cgroup) {
  std::vector<pid_t> out;
  std::ifstream in(cgroup + "/cgroup.procs");
  pid_t pid;
  while (in >> pid)
    out.push_back(pid);
  return out;
}

// The numeric entries of /proc.
std::vector<pid_t> AllPids() {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && pid > 0) out.push_back(static_cast<pid_t>(pid));
  }
  closedir(d);
  return out;
}

// The parent of `pid` (from /proc/PID/stat, after the command's closing parenthesis); 0 when
// it cannot be read.
pid_t ParentOf(pid_t pid) {
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  char state = 0;
  int ppid = 0;
  if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2) return 0;
  return ppid;
}

// Whether a child can join a cgroup made under `subtree` (write access to cgroup.procs of the
// common ancestor is needed too, so the only sure test is to do it).
bool CanJoin(const std::string& subtree, std::string* why) {
  const std::string probe = subtree + "/probe-" + std::to_string(getpid());
  if (mkdir(probe.c_str(), 0755) != 0 && errno != EEXIST) {
    *why = "cannot make " + probe + ": " + std::strerror(errno);
    return false;
  }
  int fd = open((probe + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  bool joined = false;
  if (fd >= 0) {
    pid_t child = fork();
    if (child == 0) _exit(write(fd, "0", 1) == 1 ? 0 : 1);
    int status = 0;
    joined = child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
             WEXITSTATUS(status) == 0;
    close(fd);
  }
  if (!joined) *why = "a process cannot join a cgroup made in " + subtree;
  rmdir(probe.c_str());
  return joined;
}

}  // namespace

bool ProcessAlive(pid_t pid) {
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

std::string CgroupDirOf(pid_t pid, std::string* why) {
  std::string mount, root;
  std::ifstream info("/proc/self/mountinfo");
  for (std::string line; std::getline(info, line);) {
    size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, dev;
    fields >> id >> parent >> dev >> root >> mount;
    break;
  }
  if (mount.empty()) {
    if (why != nullptr) *why = "no cgroup v2 is mounted";
    return "";
  }
  const std::string file = "/proc/" + std::to_string(pid) + "/cgroup";
  std::ifstream cg(file);
  for (std::string line; std::getline(cg, line);) {
    if (line.rfind("0::", 0) != 0) continue;
    std::string path = line.substr(3);
    if (root != "/" && path.rfind(root, 0) == 0) path = path.substr(root.size());
    if (path == "/") path.clear();
    return mount + path;
  }
  if (why != nullptr) *why = "the process is in no cgroup v2 (" + file + " has no 0:: line)";
  return "";
}

Result<ContainmentKind> ParseContainmentKind(std::string_view name) {
  if (name == "auto") return ContainmentKind::kAuto;
  if (name == "cgroup") return ContainmentKind::kCgroup;
  if (name == "process-group") return ContainmentKind::kProcessGroup;
  return InvalidArgument("--containment: expected auto, cgroup or process-group, got \"" +
                         std::string(name) + "\"");
}

std::string AgentIdentity(const std::string& node, const std::string& work_dir) {
  std::error_code ec;
  std::string dir = std::filesystem::absolute(work_dir, ec).lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  uint32_t h = 2166136261u;  // FNV-1a: the same in every build, unlike std::hash
  for (unsigned char c : dir) {
    h ^= c;
    h *= 16777619u;
  }
  char hex[16];
  std::snprintf(hex, sizeof hex, "%08x", h);
  return node + "-" + hex;
}

Result<std::unique_ptr<Containment>> Containment::Make(const ContainmentOptions& options) {
  std::unique_ptr<Containment> c(new Containment());
  c->identity_ = options.identity;
  std::string why;
  if (options.kind != ContainmentKind::kProcessGroup) {
    std::string base =
        options.cgroup_root.empty() ? CgroupDirOf(getpid(), &why) : options.cgroup_root;
    if (!base.empty()) {
      std::string subtree = base + "/tessera-" + options.identity;
      if (mkdir(subtree.c_str(), 0755) != 0 && errno != EEXIST) {
        why = "cannot make " + subtree + ": " + std::strerror(errno);
      } else if (CanJoin(subtree, &why)) {
        c->subtree_ = subtree;
        c->description_ = "cgroup v2: each task in a cgroup of its own under " + subtree;
        return c;
      }
    }
    if (options.kind == ContainmentKind::kCgroup) {
      return Status(StatusCode::kFailedPrecondition, "--containment cgroup: " + why);
    }
  } else {
    why = "--containment process-group";
  }
  // Orphaned descendants become the agent's children rather than init's.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  c->description_ = "process groups, the agent as child subreaper (" + why + ")";
  return c;
}

Containment::~Containment() {
  if (!subtree_.empty()) rmdir(subtree_.c_str());  // only when no task's cgroup is left in it
}

std::string Containment::CgroupOf(const std::string& key) const {
  return subtree_.empty() ? "" : subtree_ + "/task-" + key;
}

int Containment::Prepare(const std::string& key, std::string* error) {
  if (subtree_.empty()) return -1;
  const std::string dir = CgroupOf(key);
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    *error = "cannot make the task's cgroup " + dir + ": " + std::strerror(errno);
    return -1;
  }
  int fd = open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) *error = "cannot open " + dir + "/cgroup.procs: " + std::strerror(errno);
  return fd;
}

std::set<pid_t> Containment::Marked(const std::string& key) const {
  std::set<pid_t> out;
  const std::string identity = kIdentityVar + identity_;
  const std::string task = kKeyVar + key;
  const pid_t self = getpid();
  for (pid_t pid : AllPids()) {
    if (pid == self) continue;
    std::string env = ReadFile("/proc/" + std::to_string(pid) + "/environ");
    bool mine = false, of_task = key.empty();
    for (size_t start = 0; start < env.size();) {
      size_t end = env.find('\0', start);
      if (end == std::string::npos) end = env.size();
      std::string_view var(env.data() + start, end - start);
      mine = mine || var == identity;
      of_task = of_task || var == task;
      start = end + 1;
    }
    if (mine && of_task) out.insert(pid);
  }
  return out;
}

void Containment::Signal(const std::string& key, pid_t pgid, int sig) {
  if (pgid > 0) kill(-pgid, sig);
  if (!subtree_.empty()) {
    const std::string dir = CgroupOf(key);
    if (sig == SIGKILL) {
      // Every process of the cgroup at once, new ones included (Linux 5.14).
      int fd = open((dir + "/cgroup.kill").c_str(), O_WRONLY | O_CLOEXEC);
      if (fd >= 0) {
        bool killed = write(fd, "1", 1) == 1;
        close(fd);
        if (killed) return;
      }
    }
    for (pid_t pid : ProcsOf(dir))
      kill(pid, sig);
    return;
  }
  for (pid_t pid : Marked(key))
    kill(pid, sig);
}

bool Containment::Gone(const std::string& key, pid_t pgid) const {
  if (!subtree_.empty()) {
    for (pid_t pid : ProcsOf(CgroupOf(key)))
      if (ProcessAlive(pid)) return false;
    return true;
  }
  if (pgid > 0 && kill(-pgid, 0) == 0) {
    // Zombies of the group (not yet reaped) are not alive.
    for (pid_t pid : AllPids())
      if (getpgid(pid) == pgid && ProcessAlive(pid)) return false;
  }
  for (pid_t pid : Marked(key))
    if (ProcessAlive(pid)) return false;
  return true;
}

bool Containment::Release(const std::string& key) {
  if (subtree_.empty()) return true;
  return rmdir(CgroupOf(key).c_str()) == 0 || errno == ENOENT;
}

int Containment::KillLeftovers() {
  int killed = 0;
  auto wait_gone = [](const std::function<bool()>& gone) {
    for (int i = 0; i < 100 && !gone(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  if (!subtree_.empty()) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(subtree_, ec)) {
      const std::string name = e.path().filename().string();
      if (!e.is_directory() || name.rfind("task-", 0) != 0) continue;
      const std::string key = name.substr(5);
      killed += static_cast<int>(ProcsOf(e.path().string()).size());
      Signal(key, 0, SIGKILL);
      wait_gone([&] { return Gone(key, 0); });
      Release(key);
    }
    return killed;
  }
  for (pid_t pid : Marked("")) {
    kill(pid, SIGKILL);
    ++killed;
  }
  wait_gone([&] { return Gone("", 0); });
  ReapOrphans({});
  return killed;
}

void Containment::ReapOrphans(const std::set<pid_t>& tasks) {
  if (!subtree_.empty()) return;
  const pid_t self = getpid();
  for (pid_t pid : Marked("")) {
    if (!tasks.count(pid) && ParentOf(pid) == self) orphans_.insert(pid);
  }
  for (auto it = orphans_.begin(); it != orphans_.end();) {
    pid_t r = waitpid(*it, nullptr, WNOHANG);
    if (r == *it || (r < 0 && errno == ECHILD)) {
      it = orphans_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace tessera
