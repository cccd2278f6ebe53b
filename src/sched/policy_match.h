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

}  // namespace tessera
