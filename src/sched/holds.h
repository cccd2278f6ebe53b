// Devices held by reservation rules (docs/governance.md#reservations).
//
// A `reservation` rule holds `count` devices of one model within its clusters or regions
// (anywhere when it names none) for the jobs its match selects — the owners. Owners may use
// any device. For everyone else the held devices are off limits unless the rule lends them
// preemptibly: then a preemptible job may borrow them and an owner that finds no room takes
// them back by preempting it. In counts, per hold:
//
//   others' usage that counts  <=  capacity of the model in scope - count
//
// where others' usage that counts is every non-owner's usage of the model there, or — when
// the rule lends preemptibly — only non-preemptible non-owners' usage. The count is of
// devices, not of particular devices: any `count` devices of the model in scope are the
// held ones, so the placer needs no special nodes.
//
// Thread-safety: none; owned by the engine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/spec.h"
#include "sched/cell_state.h"

namespace tessera {

// The clusters a reservation holds its devices in (by cluster): those it names, those in the
// regions it names, every cluster when it names neither.
std::vector<bool> ReservationScope(const Spec& spec, const ReservationRule& r);

class DeviceHolds {
 public:
  DeviceHolds(const Spec& spec, const CellState& cell);

  size_t size() const { return holds_.size(); }
  // The holds (a bit per hold, at most 64) whose rule selects the job.
  uint64_t OwnedBy(const Job& job) const;

  // Why a run with these placements would break a hold; "" when it keeps them all.
  std::string Refuses(const std::vector<Placement>& placements, uint64_t owned,
                      bool preemptible) const;
  // A run starts (sign +1) or stops (-1).
  void Charge(const std::vector<Placement>& placements, uint64_t owned, bool preemptible, int sign);

  // The holds an owner may take back: it owns them, owners use fewer than `count`, and
  // non-owners sit on held devices (their usage is above capacity - count).
  uint64_t Reclaimable(uint64_t owned) const;
  // Whether the run uses, as a borrower, a device of one of `holds` (the model in scope).
  bool Borrows(const std::vector<Placement>& placements, uint64_t owned, uint64_t holds) const;
  // The device models of `holds`, as a mask.
  ModelMask Models(uint64_t holds) const;

 private:
  struct Hold {
    const PolicyRule* rule = nullptr;
    uint16_t model = 0;
    std::vector<bool> in_scope;  // by cluster
    Milli count = 0;             // milli
    Milli capacity = 0;          // milli of the model in scope
    bool lend = true;
    Milli owners = 0;   // owners' usage
    Milli counted = 0;  // others' usage that counts against capacity - count
    Milli others = 0;   // every non-owner's usage
  };
  // The milli of the hold's model in its scope that the placements use.
  Milli Use(const Hold& h, const std::vector<Placement>& placements) const;

  const Spec& spec_;
  const CellState& cell_;
  std::vector<Hold> holds_;
};

}  // namespace tessera
