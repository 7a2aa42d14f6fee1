// GatherSettings are checked before use (Character::create): each field out of its range is
// refused with the field named.
#include "handoff/controller.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace handoff {
namespace {

TEST(GatherSettings, EachFieldOutOfRangeIsRefusedByName) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const struct {
    void (*set)(GatherSettings&);
    const char* field;
  } cases[] = {
      {[](GatherSettings& s) { s.duration = -0.1; }, "gather.duration"},
      {[](GatherSettings& s) { s.rampTime = std::numeric_limits<double>::infinity(); }, "gather.rampTime"},
      {[](GatherSettings& s) { s.restSpeed = 0.0; }, "gather.restSpeed"},
      {[](GatherSettings& s) { s.maxDuration = -1.0; }, "gather.maxDuration"},
      {[](GatherSettings& s) { s.jointSpeed = 0.0; }, "gather.jointSpeed"},
      {[](GatherSettings& s) { s.jointSpeed = std::numeric_limits<double>::quiet_NaN(); },
       "gather.jointSpeed"},
  };
  for (const auto& c : cases) {
    GatherSettings s;
    c.set(s);
    const Status status = validateGatherSettings(s);
    ASSERT_FALSE(status) << c.field;
    EXPECT_NE(status.error().find(c.field), std::string::npos) << status.error();
  }
  GatherSettings nanDuration;
  nanDuration.duration = nan;
  EXPECT_FALSE(validateGatherSettings(nanDuration));
  EXPECT_TRUE(validateGatherSettings(GatherSettings{}));
  GatherSettings noGather;  // duration 0: no gather, valid
  noGather.duration = 0.0;
  noGather.braceChest = false;
  EXPECT_TRUE(validateGatherSettings(noGather));
}

}  // namespace
}  // namespace handoff
