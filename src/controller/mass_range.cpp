// The body masses a character simulates (issue 28): Character::create refuses a ragdoll whose body
// masses leave the supported range, naming the body and the range. A function of its own (the
// asset's structural checks are another's) so that create() calls each.
#include "handoff/controller.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace handoff {

Status validateMassRange(const RagdollAsset& asset) {
  for (size_t b = 0; b < asset.bodies.size(); ++b) {
    const BodyDef& body = asset.bodies[b];
    if (std::isfinite(body.mass) && body.mass >= kMinBodyMass && body.mass <= kMaxBodyMass) continue;
    char text[200];
    std::snprintf(text, sizeof text,
                  "bodies[%zu].mass ('%s') is %g kg, outside the supported range [%g, %g] kg per body", b,
                  body.name.c_str(), body.mass, kMinBodyMass, kMaxBodyMass);
    return Error{text};
  }
  return {};
}

}  // namespace handoff
