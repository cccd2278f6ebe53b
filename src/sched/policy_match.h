// Which policy rules apply to a job: Match (model/policy.h) evaluated against a job and the
// spec's tenant tree and priority classes.
#pragma once

#include <vector>

#include "model/spec.h"

namespace tessera {

bool MatchesJob(const Spec& spec, const Match& match, const Job& job);

// A service as the rules see it: a job of class inference with the service's name, tenant,
// priority and labels, and one task group of its minimum replicas.
Job ServiceAsJob(const Service& service);

// The rules of one kind that match the job, in declaration order.
std::vector<const PolicyRule*> MatchingRules(const Spec& spec, RuleKind kind, const Job& job);

// The first `fallback` rule that matches the job; null when none does.
const FallbackRule* FirstFallback(const Spec& spec, const Job& job);

// How fast task group `g` of `job` runs on `model` (milli, 1000 = the reference device): its
// own model list's speed; for a group that lists none, the speed `fallback` (FirstFallback of
// the job) gives the model in its order, else (not in its order, or no speed given there) the
// catalog's for the job's class.
Milli GroupSpeedOn(const Spec& spec, const Job& job, const TaskGroup& g, DeviceModelId model,
                   const FallbackRule* fallback);

}  // namespace tessera
