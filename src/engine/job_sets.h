// A partition of job ids (JobId values) into numbered sets — the running jobs by tenant, or by
// priority class — with O(1) insert and erase and no memory per element beyond two numbers.
// The engine's victim search walks a set's members and sorts what it finds, so the members
// come in no particular order (insertion order, disturbed by erases; deterministic for the
// same calls). std::set<uint32_t> did this with a tree node per member, whose walks missed the
// cache at every level whenever other threads had run on the engine's core between cycles.
//
// Thread-safety: none; the engine's own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera {

class JobSets {
 public:
  // Puts `id` into set `set` (out of the one it was in, if any).
  void Insert(uint32_t set, uint32_t id);
  // Takes `id` out of its set; nothing when it is in none.
  void Erase(uint32_t id);
  bool contains(uint32_t id) const { return id < set_of_.size() && set_of_[id] != kNone; }
  // The members of set `set` (empty for a set never used).
  const std::vector<uint32_t>& members(uint32_t set) const {
    return set < sets_.size() ? sets_[set] : kEmpty;
  }
  size_t set_count() const { return sets_.size(); }
  // The ids in all sets together.
  size_t size() const { return size_; }

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  static const std::vector<uint32_t> kEmpty;
  std::vector<std::vector<uint32_t>> sets_;
  std::vector<uint32_t> set_of_;  // by id: its set, or kNone
  std::vector<uint32_t> pos_;     // by id: its index in its set's members
  size_t size_ = 0;
};

}  // namespace tessera
