// The base fleet (spec_fixture.h) with a cell of all its nodes, for tests of what reads a cell.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "sched/cell_state.h"
#include "testutil/spec_fixture.h"

namespace tessera::testing {

struct BaseCell {
  BaseCell() : spec(std::make_unique<Spec>(BaseSpec())) {
    auto made = CellState::FromSpec(*spec);
    EXPECT_TRUE(made.ok()) << made.status().message();
    if (made.ok()) cell = std::make_unique<CellState>(std::move(*made));
  }
  std::unique_ptr<Spec> spec;  // owned apart: the cell's users keep references to it
  std::unique_ptr<CellState> cell;
};

}  // namespace tessera::testing
