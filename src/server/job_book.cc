// The daemon's jobs as the API sees them (job_book.h).
#include "server/job_book.h"

#include <algorithm>
#include <utility>

#include "engine/job_record.h"

namespace tessera {

namespace {

// The index key of a submission's Idempotency-Key, which is scoped to its principal.
std::string IdempotencyKey(const std::string& principal, const std::string& key) {
  return principal + '\x1f' + key;
}

bool IsNumber(const std::string& s) {
  return !s.empty() && s.size() < 19 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

void JobBook::Push(StoredJob row) {
  rows_.push_back(std::move(row));
  engine_id_.emplace_back();
  restart_base_.push_back(rows_.back().restarts);
  placed_generation_.push_back(kNoPlacement);
}

void JobBook::Add(StoredJob& row) {
  row.id = static_cast<int64_t>(rows_.size()) + 1;
  row.state = "pending";
  row.reason = std::string(PendingReasonCode(PendingReason::kNew));
  Push(row);
  rows_.back().resolved = std::string();
  restart_base_.back() = 0;
  by_name_[row.name].push_back(row.id);
  if (!row.idempotency_key.empty()) {
    by_key_[IdempotencyKey(row.principal, row.idempotency_key)] = row.id;
  }
}

void JobBook::Refuse(int64_t id, const std::string& why) {
  StoredJob& failed = row(id);
  failed.state = "failed";
  failed.reason = "store";
  failed.detail = why;
  ++hidden_;
  if (!failed.idempotency_key.empty()) {
    by_key_.erase(IdempotencyKey(failed.principal, failed.idempotency_key));
  }
}

const StoredJob* JobBook::Keyed(const std::string& principal, const std::string& key) const {
  auto it = by_key_.find(IdempotencyKey(principal, key));
  return it == by_key_.end() ? nullptr : &row(it->second);
}

const StoredJob* JobBook::ActiveNamed(const std::string& name, const std::string& tenant) const {
  auto same = by_name_.find(name);
  if (same == by_name_.end()) return nullptr;
  for (int64_t id : same->second) {
    const StoredJob& other = row(id);
    if (other.tenant == tenant && !Terminal(other.state)) return &other;
  }
  return nullptr;
}

Result<int64_t> JobBook::Resolve(const Caller& caller, const std::string& ref,
                                 const std::string& tenant) const {
  auto hidden = [&] { return NotFound("no job \"" + ref + "\""); };
  if (IsNumber(ref)) {
    int64_t id = std::stoll(ref);
    if (!contains(id)) return hidden();
    const StoredJob& j = row(id);
    // Another tenant's job is reported as missing, not forbidden: its existence is theirs.
    if (!caller.MaySee(j.tenant) || Hidden(j)) return hidden();
    return id;
  }
  auto it = by_name_.find(ref);
  if (it == by_name_.end()) return hidden();
  int64_t found = 0;
  std::string found_tenant;
  for (auto id = it->second.rbegin(); id != it->second.rend(); ++id) {
    const StoredJob& j = row(*id);
    if (!caller.MaySee(j.tenant) || Hidden(j)) continue;
    if (!tenant.empty() && j.tenant != tenant) continue;
    if (found == 0) {
      found = *id;
      found_tenant = j.tenant;
    } else if (j.tenant != found_tenant) {
      return FailedPrecondition("job name \"" + ref + "\" is used by tenants \"" + found_tenant +
                                "\" and \"" + j.tenant + "\"; give the tenant or the id");
    }
  }
  if (found == 0) return hidden();
  return found;
}

JobBook::Page JobBook::Find(const Caller& caller, const JobFilter& f) const {
  Page page;
  const size_t limit = static_cast<size_t>(std::clamp(f.limit, 1, 1000));
  // Newest first: the page holds the newest matches below the cursor (an id; 0 = from the
  // newest); every match counts in the total, so that a client can say "N of M shown".
  for (size_t i = rows_.size(); i-- > 0;) {
    const StoredJob& j = rows_[i];
    if (Hidden(j) || !caller.MaySee(j.tenant)) continue;
    if (!f.tenant.empty() && !WithinTenant(j.tenant, f.tenant)) continue;
    if (!f.name.empty() && j.name != f.name) continue;
    if (f.state == "active" ? Terminal(j.state) : !f.state.empty() && j.state != f.state) continue;
    if (!f.job_class.empty() && j.job_class != f.job_class) continue;
    ++page.total;
    if (f.after > 0 && j.id >= f.after) continue;
    if (page.ids.size() == limit) {
      page.next = page.ids.back();
      continue;
    }
    page.ids.push_back(j.id);
  }
  return page;
}

void JobBook::Load(StableVector<StoredJob> rows) {
  const size_t ids = rows.empty() ? 0 : static_cast<size_t>(rows.back().id);
  // Ids without a gap (the rule: a gap is an insert that failed) hand the rows over as they
  // are, touching no memory again.
  if (rows_.empty() && ids == rows.size()) {
    rows_ = std::move(rows);
  } else {
    rows_.reserve(ids);
    for (StoredJob& stored : rows) {
      // A gap is a submission whose insert failed (never acknowledged): a hidden placeholder.
      while (static_cast<int64_t>(rows_.size()) + 1 < stored.id) {
        StoredJob& gap = rows_.emplace_back();
        gap.id = static_cast<int64_t>(rows_.size());
        gap.state = "failed";
        gap.reason = "store";
        ++hidden_;
      }
      rows_.push_back(std::move(stored));
    }
  }
  engine_id_.resize(rows_.size());
  placed_generation_.assign(rows_.size(), kNoPlacement);
  restart_base_.reserve(rows_.size());
  for (const StoredJob& row : rows_)
    restart_base_.push_back(row.restarts);
}

void JobBook::IndexNames() {
  by_name_.reserve(rows_.size());
  by_key_.reserve(rows_.size());
  for (const StoredJob& row : rows_) {
    if (row.name.empty()) continue;  // a gap
    by_name_[row.name].push_back(row.id);
    if (!row.idempotency_key.empty())
      by_key_[IdempotencyKey(row.principal, row.idempotency_key)] = row.id;
  }
}

void JobBook::Bind(int64_t id, JobId job) {
  if (by_engine_.size() <= job.value()) by_engine_.resize(job.value() + 1, 0);
  by_engine_[job.value()] = id;
  engine_id_[Index(id)] = job;
}

void JobBook::ForgetEngine() {
  by_engine_.clear();
  std::fill(placed_generation_.begin(), placed_generation_.end(), kNoPlacement);
}

}  // namespace tessera
