#include "backends/local/supervisor.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "common/clock.h"

extern char** environ;

namespace tessera {

namespace {

// The program's path: as given when it names a path, else the first match on PATH.
std::string Resolve(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return program;
}

// The child's environment, clean: nothing of the agent's own (its token, its server, whatever
// its service manager set) but the search path and the locale, then the task's user (`user`)
// and the task's variables (the job's own, TESSERA_TASK_*, devices, peers) over them.
std::vector<std::string> Environment(const std::map<std::string, std::string>& vars,
                                     const std::string& user, const std::string& home,
                                     const std::string& shell) {
  std::map<std::string, std::string> all;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string name = kv.substr(0, eq);
    if (name == "PATH" || name == "LANG" || name == "LANGUAGE" || name == "TZ" ||
        name.rfind("LC_", 0) == 0) {
      all[name] = kv.substr(eq + 1);
    }
  }
  if (!all.count("PATH")) all["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  if (!user.empty()) {
    all["HOME"] = home;
    all["USER"] = user;
    all["LOGNAME"] = user;
    all["SHELL"] = shell;
  }
  for (const auto& [k, v] : vars)
    all[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : all)
    out.push_back(k + "=" + v);
  return out;
}

// Who a task runs as: the host account of its runAs, resolved before the fork (the child may
// call only async-signal-safe functions).
struct Identity {
  bool change = false;  // the agent is root and drops to uid/gid
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;     // the user's supplementary groups
  std::string name, dir, shell;  // "" = no account (HOME and USER are left unset)
};

// The identity of a task, or why it may not run.
Result<Identity> IdentityOf(const TaskAssignment& a, bool allow_root) {
  Identity id;
  const uid_t self = geteuid();
  std::string user = a.run_as_user;
  if (user.empty()) {
    if (self == 0 && !allow_root) {
      return FailedPrecondition(
          "the agent runs as root and the task names no user to run as: set runAs for its "
          "tenant or cluster in the configuration, or start the agent with --allow-root-tasks");
    }
    const passwd* pw = getpwuid(self);
    if (pw == nullptr) return id;
    user = pw->pw_name;
  }
  const passwd* pw = getpwnam(user.c_str());
  if (pw == nullptr) return FailedPrecondition("no user \"" + user + "\" on this host (runAs)");
  id.uid = pw->pw_uid;
  id.gid = pw->pw_gid;
  id.name = pw->pw_name;
  id.dir = pw->pw_dir;
  id.shell = pw->pw_shell;
  if (!a.run_as_group.empty()) {
    const group* gr = getgrnam(a.run_as_group.c_str());
    if (gr == nullptr) {
      return FailedPrecondition("no group \"" + a.run_as_group + "\" on this host (runAs)");
    }
    id.gid = gr->gr_gid;
  }
  if (id.uid != self) {
    if (self != 0) {
      return FailedPrecondition("the agent runs as uid " + std::to_string(self) +
                                ", not root: it cannot run the task as \"" + user + "\" (runAs)");
    }
    if (id.uid == 0 && !allow_root) {
      return FailedPrecondition("runAs names root: start the agent with --allow-root-tasks");
    }
    id.change = true;
    int n = 64;
    id.groups.resize(static_cast<size_t>(n));
    if (getgrouplist(id.name.c_str(), id.gid, id.groups.data(), &n) < 0) {
      id.groups.resize(static_cast<size_t>(n));
      getgrouplist(id.name.c_str(), id.gid, id.groups.data(), &n);
    }
    id.groups.resize(static_cast<size_t>(n));
  }
  return id;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

Supervisor::Supervisor(SupervisorOptions options, std::unique_ptr<Containment> containment)
    : options_(std::move(options)), containment_(std::move(containment)) {}

Supervisor::~Supervisor() {
  for (auto& [key, t] : tasks_) {
    if (!t.running && !t.draining) continue;
    SignalTask(key, t, SIGKILL);
    if (t.running) waitpid(t.pid, nullptr, 0);
    if (containment_) containment_->Release(key.ToString());
  }
}

bool Supervisor::Knows(const TaskKey& key) const {
  return tasks_.count(key) > 0 || forgotten_.count(key) > 0;
}

namespace {

// The child between fork and exec (only async-signal-safe calls): into the task's cgroup, the
// task's user, its own process group, a death signal tied to the agent, the log as stdout and
// stderr, its directory, then exec. A step that fails writes its errno to `report` and exits
// 127.
// In the child: the failed step's errno to `report`, and exit 127.
[[noreturn]] void ExitReporting(int report) {
  int err = errno;
  (void)!write(report, &err, sizeof err);
  _exit(127);
}

[[noreturn]] void ExecTask(const Identity& as, pid_t parent, int cgroup, int log, int null,
                           int report, const char* dir, const char* program, char* const* args,
                           char* const* envp) {
  setpgid(0, 0);
  if (cgroup >= 0 && write(cgroup, "0", 1) != 1) ExitReporting(report);  // into its cgroup
  if (as.change && (setgroups(as.groups.size(), as.groups.data()) != 0 || setgid(as.gid) != 0 ||
                    setuid(as.uid) != 0)) {
    ExitReporting(report);
  }
  // After the user changes: a change of credentials clears the death signal.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // the agent died before the signal was armed
  dup2(null, 0);
  dup2(log, 1);
  dup2(log, 2);
  if (chdir(dir) != 0) ExitReporting(report);
  execve(program, args, envp);
  ExitReporting(report);
}

// What a task's process starts with, prepared before the fork: its directories made (and the
// task user's), its log, program, arguments and environment.
struct Prepared {
  std::string log_path, dir, program;
  std::vector<std::string> argv, env;
};

Result<Prepared> PrepareTask(const TaskAssignment& a, const Identity& who,
                             const SupervisorOptions& options, const Containment* containment) {
  std::error_code ec;
  std::filesystem::path logs = std::filesystem::path(options.work_dir) / "logs";
  std::filesystem::path dir = std::filesystem::path(options.work_dir) / "tasks" / a.key.ToString();
  std::filesystem::path checkpoints =
      std::filesystem::path(options.checkpoint_root) / std::to_string(a.key.job);
  std::filesystem::create_directories(logs, ec);
  std::filesystem::create_directories(dir, ec);
  std::filesystem::create_directories(checkpoints, ec);
  std::map<std::string, std::string> vars = a.env;
  vars["TESSERA_CHECKPOINT_DIR"] = checkpoints.string();
  vars["TESSERA_TASK_KEY"] = a.key.ToString();
  if (containment != nullptr) vars["TESSERA_AGENT_ID"] = containment->identity();
  if (who.change) {
    // Its working and checkpoint directories are the task user's.
    if (chown(dir.c_str(), who.uid, who.gid) != 0 ||
        chown(checkpoints.c_str(), who.uid, who.gid) != 0) {
      return FailedPrecondition("cannot give the task's directories to \"" + who.name +
                                "\": " + std::strerror(errno));
    }
  }
  Prepared p;
  p.log_path = (logs / (a.key.ToString() + ".log")).string();
  p.dir = dir.string();
  p.argv = a.command;
  p.program = Resolve(p.argv.at(0));
  p.env = Environment(vars, who.name, who.dir, who.shell);
  return p;
}

}  // namespace

void Supervisor::Start(const TaskAssignment& a, TimeMs now) {
  (void)now;
  Task& t = tasks_[a.key];
  auto fail = [&t](std::string why) {
    t.running = false;
    t.exit_code = 127;
    t.error = std::move(why);
  };
  Result<Identity> who = IdentityOf(a, options_.allow_root_tasks);
  if (!who.ok()) return fail(who.status().message());
  Result<Prepared> task = PrepareTask(a, *who, options_, containment_.get());
  if (!task.ok()) return fail(task.status().message());
  t.log_path = task->log_path;
  std::vector<char*> envp = Pointers(task->env);
  std::vector<char*> args = Pointers(task->argv);

  std::string contain_error;
  const int cgroup = containment_ ? containment_->Prepare(a.key.ToString(), &contain_error) : -1;
  if (!contain_error.empty()) return fail(contain_error);
  int log = open(t.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int pipefd[2];  // carries exec's errno back; closed on a successful exec
  if (log < 0 || null < 0 || pipe2(pipefd, O_CLOEXEC) != 0) {
    fail(std::string("cannot prepare the task: ") + std::strerror(errno));
    if (log >= 0) close(log);
    if (null >= 0) close(null);
    if (cgroup >= 0) close(cgroup);
    return;
  }
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    ExecTask(*who, parent, cgroup, log, null, pipefd[1], task->dir.c_str(), task->program.c_str(),
             args.data(), envp.data());
  }
  const int fork_errno = errno;
  close(pipefd[1]);
  close(log);
  close(null);
  if (cgroup >= 0) close(cgroup);
  if (pid < 0) {
    close(pipefd[0]);
    return fail(std::string("fork: ") + std::strerror(fork_errno));
  }
  setpgid(pid, pid);  // also from the parent: no race with an early Stop
  t.pid = pid;
  int err = 0;
  ssize_t n;
  do {
    n = read(pipefd[0], &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  close(pipefd[0]);
  if (n == static_cast<ssize_t>(sizeof err)) {
    waitpid(pid, nullptr, 0);
    fail("cannot execute " + task->argv[0] + ": " + std::strerror(err));
  }
}

void Supervisor::Stop(const TaskKey& key, Millis grace, TimeMs now) {
  auto it = tasks_.find(key);
  if (it == tasks_.end() || !it->second.running || it->second.stopping) return;
  Task& t = it->second;
  t.stopping = true;
  t.kill_at = now + grace;
  SignalTask(key, t, SIGTERM);
}

void Supervisor::SignalTask(const TaskKey& key, const Task& t, int sig) {
  if (containment_) {
    containment_->Signal(key.ToString(), t.pid, sig);
  } else {
    kill(-t.pid, sig);
  }
}

bool Supervisor::Poll(TimeMs now) {
  bool exited = false;
  for (auto& [key, t] : tasks_) {
    if (!t.running) continue;
    int status = 0;
    pid_t r = waitpid(t.pid, &status, WNOHANG);
    if (r == t.pid) {
      t.running = false;
      t.exit_code = WIFEXITED(status)     ? WEXITSTATUS(status)
                    : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                          : 1;
      // What the task left behind: its group, its cgroup, what carries its key.
      SignalTask(key, t, SIGKILL);
      t.draining = containment_ != nullptr;
      exited = true;
      continue;
    }
    if (t.stopping && now >= t.kill_at) SignalTask(key, t, SIGKILL);
  }
  Drain(now);
  return exited;
}

void Supervisor::Drain(TimeMs now) {
  if (!containment_ || now - drained_at_ < 200) return;
  drained_at_ = now;
  std::set<pid_t> running;
  bool any = false;
  for (auto& [key, t] : tasks_) {
    if (t.running) running.insert(t.pid);
    if (!t.draining) continue;
    any = true;
    const std::string k = key.ToString();
    if (!containment_->Gone(k, t.pid)) {
      containment_->Signal(k, t.pid, SIGKILL);  // a straggler forked meanwhile
      continue;
    }
    if (containment_->Release(k)) t.draining = false;
  }
  // Orphans are looked for in every process's environment: now and then, or while draining.
  if (any || now - reaped_at_ >= 2000) {
    reaped_at_ = now;
    containment_->ReapOrphans(running);
  }
}

std::string Supervisor::Tail(Task& t, bool force) {
  struct stat st {};
  if (t.log_path.empty() || stat(t.log_path.c_str(), &st) != 0) return "";
  if (!force && st.st_size == t.log_sent) return "";
  t.log_sent = st.st_size;
  int fd = open(t.log_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  off_t from = std::max<off_t>(0, st.st_size - static_cast<off_t>(options_.log_bytes));
  std::string out(static_cast<size_t>(st.st_size - from), '\0');
  ssize_t n = pread(fd, out.data(), out.size(), from);
  close(fd);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

std::vector<TaskReport> Supervisor::Reports(bool all_logs) {
  std::vector<TaskReport> out;
  for (auto& [key, t] : tasks_) {
    if (!t.running && t.acked) continue;
    TaskReport r;
    r.key = key;
    r.pid = t.pid;
    r.phase = t.running ? TaskPhase::kRunning : TaskPhase::kExited;
    r.exit_code = t.exit_code;
    r.stopped = t.stopping;
    r.error = t.error;
    if (!t.tail_stored) r.log = Tail(t, all_logs || !t.running);
    out.push_back(std::move(r));
  }
  return out;
}

void Supervisor::Acknowledge(const std::vector<TaskKey>& keys, TimeMs now) {
  for (const TaskKey& k : keys) {
    auto it = tasks_.find(k);
    if (it == tasks_.end() || it->second.running || it->second.acked) continue;
    it->second.acked = true;
    it->second.tail_stored = true;
    it->second.acked_at = now;
  }
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    const Task& t = it->second;
    if (t.acked && now - t.acked_at > options_.keep_acknowledged) {
      forgotten_.insert(it->first);
      it = tasks_.erase(it);
    } else {
      ++it;
    }
  }
}

void Supervisor::Unacknowledge() {
  for (auto& [key, t] : tasks_)
    t.acked = false;
}

std::vector<TaskKey> Supervisor::Running() const {
  std::vector<TaskKey> out;
  for (const auto& [key, t] : tasks_) {
    if (t.running) out.push_back(key);
  }
  return out;
}

void Supervisor::StopAll(Millis grace) {
  SystemClock clock;
  auto now = [&] { return clock.Now(); };
  TimeMs start = now();
  for (const TaskKey& k : Running())
    Stop(k, grace, start);
  auto draining = [&] {
    for (const auto& [key, t] : tasks_)
      if (t.draining) return true;
    return false;
  };
  while (!Running().empty() || draining()) {
    Poll(now());
    if (now() - start > grace + 2000) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace tessera
