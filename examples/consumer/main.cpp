// The smallest program on an installed handoff: a one-bone clip spinning about Y, sampled at
// two times, and the angular velocity of SPEC.md section 3 from the two samples. Given a file
// (consumer hero.bvh), it also imports it, with Assimp in the installed handoff-import-worker.
#include <handoff/import.h>
#include <handoff/math.h>
#include <handoff/rig.h>

#include <cmath>
#include <cstdio>

int main(int argc, char** argv) {
  using namespace handoff;
  Skeleton skeleton;
  skeleton.jointNames = {"root"};
  skeleton.parents = {kNoParent};
  skeleton.restLocal = {Transform::identity()};
  skeleton.endSiteOffset = {Vec3{0.0}};

  Clip clip;
  clip.name = "spin";
  clip.jointCount = 1;
  clip.frameCount = 2;
  clip.frameRate = 1.0;
  clip.keys = {Transform::identity(), Transform::fromRotation(glm::angleAxis(1.0, Vec3{0, 1, 0}))};
  if (!clip.validate(skeleton).ok()) return 1;

  Transform a, b;
  clip.sample(0.25, WrapMode::Clamp, {&a, 1});
  clip.sample(0.50, WrapMode::Clamp, {&b, 1});
  const AngularVelocity w = angularVelocity(a.rotation, b.rotation, 0.25);
  std::printf("omega = (%.6f, %.6f, %.6f) rad/s\n", w.omega.x, w.omega.y, w.omega.z);
  if (std::abs(w.omega.y - 1.0) > 1e-9) return 1;
  if (argc > 1) {
    Result<ImportedAsset> imported = importFile(argv[1]);
    if (!imported) {
      std::printf("%s\n", imported.error().c_str());
      return 1;
    }
    std::printf("imported %d joints, %zu clips from %s\n", imported->skeleton.jointCount(),
                imported->clips.size(), argv[1]);
  }
  std::printf("consumer ok\n");
  return 0;
}
