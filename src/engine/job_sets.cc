#include "engine/job_sets.h"

namespace tessera {

const std::vector<uint32_t> JobSets::kEmpty;

void JobSets::Insert(uint32_t set, uint32_t id) {
  Erase(id);
  if (set >= sets_.size()) sets_.resize(set + 1);
  if (id >= set_of_.size()) {
    set_of_.resize(id + 1, kNone);
    pos_.resize(id + 1, 0);
  }
  std::vector<uint32_t>& m = sets_[set];
  set_of_[id] = set;
  pos_[id] = static_cast<uint32_t>(m.size());
  m.push_back(id);
  ++size_;
}

void JobSets::Erase(uint32_t id) {
  if (!contains(id)) return;
  std::vector<uint32_t>& m = sets_[set_of_[id]];
  // The last member takes the erased one's place.
  const uint32_t last = m.back();
  m[pos_[id]] = last;
  pos_[last] = pos_[id];
  m.pop_back();
  set_of_[id] = kNone;
  --size_;
}

}  // namespace tessera
