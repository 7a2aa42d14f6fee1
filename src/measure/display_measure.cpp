// The display's per-frame jumps against a reference animation, and a recovery's against the
// get-up clip it plays (measure.h).
#include "handoff/measure.h"

#include <algorithm>

namespace handoff {

// ---------------------------------------------------------------------------------------------
// DisplayJumpMeasure

DisplayJumpMeasure::DisplayJumpMeasure(const Character& character)
    : joints_(character.trackedJoints().begin(), character.trackedJoints().end()),
      pelvis_(character.ragdoll().asset().map[Slot::Pelvis]) {
  const auto n = static_cast<size_t>(character.skeleton().jointCount());
  points_.resize(joints_.size());
  last_.resize(joints_.size());
  models_.resize(n);
  referenceNow_.resize(n);
  referenceBefore_.resize(n);
}

void DisplayJumpMeasure::displayedPoints(const Character& character) {
  localToModel(character.skeleton(), character.displayLocals(), models_);
  for (size_t i = 0; i < joints_.size(); ++i) {
    points_[i] = character.displayRoot().transformPoint(models_[static_cast<size_t>(joints_[i])].translation);
  }
}

void DisplayJumpMeasure::observe(const Character& character) {
  displayedPoints(character);
  last_ = points_;
  haveLast_ = true;
}

void DisplayJumpMeasure::observe(const Character& character, std::span<const Transform> referenceNow,
                                 std::span<const Transform> referenceBefore, JumpFigures& out) {
  displayedPoints(character);
  if (haveLast_) {
    localToModel(character.skeleton(), referenceNow, referenceNow_);
    localToModel(character.skeleton(), referenceBefore, referenceBefore_);
    for (size_t i = 0; i < joints_.size(); ++i) {
      const auto j = static_cast<size_t>(joints_[i]);
      const double moved = glm::length(points_[i] - last_[i]);
      const double own = glm::length(referenceNow_[j].translation - referenceBefore_[j].translation);
      const bool pelvis = joints_[i] == pelvis_;
      double& jump = pelvis ? out.pelvisJump : out.footJump;
      double& step = pelvis ? out.pelvisStep : out.footStep;
      double& ownStep = pelvis ? out.pelvisOwnStep : out.footOwnStep;
      jump = std::max(jump, moved - own);
      step = std::max(step, moved);
      ownStep = std::max(ownStep, own);
    }
  }
  last_ = points_;
  haveLast_ = true;
}

// ---------------------------------------------------------------------------------------------
// RecoveryJumpMeasure

RecoveryJumpMeasure::RecoveryJumpMeasure(const Character& character) : display_(character) {
  const auto n = static_cast<size_t>(character.skeleton().jointCount());
  clipNow_.resize(n);
  clipBefore_.resize(n);
}

void RecoveryJumpMeasure::observe(const Character& character, JumpFigures& out) {
  const bool recovering = character.state() == CharacterState::Recovering;
  const size_t recoveries = character.recoveries().size();
  // The frame the recovery finished on shows the clip's last frame: still the recovery's.
  const bool sameRecovery = wasRecovering_ && recoveries == recoveries_;
  const bool finished = !recovering && sameRecovery && character.recoveries().back().finished;
  const GetUpClip* clip = character.recoveryClip();
  if ((recovering || finished) && clip != nullptr) {
    // The clip at the time the character plays it, this frame and the last (a recovery's first
    // frame shows the captured pose: the clip has not moved yet).
    const double now = character.recoveryClipTime();
    const double before = sameRecovery ? lastClipTime_ : now;
    sampleGetUpInRoot(clip->clip, character.skeleton(), clip->info, now, clipNow_);
    sampleGetUpInRoot(clip->clip, character.skeleton(), clip->info, before, clipBefore_);
    display_.observe(character, clipNow_, clipBefore_, out);
    lastClipTime_ = now;
  } else {
    display_.observe(character);
  }
  wasRecovering_ = recovering;
  recoveries_ = recoveries;
}

// ---------------------------------------------------------------------------------------------
// LookAtMeasure

LookAtMeasure::LookAtMeasure(const Character& character, int joint) : joint_(joint) {
  const Skeleton& skeleton = character.skeleton();
  models_.resize(static_cast<size_t>(skeleton.jointCount()));
  Quat modelFromJoint{1.0, 0.0, 0.0, 0.0};
  for (int j = joint; j != kNoParent; j = skeleton.parents[static_cast<size_t>(j)])
    modelFromJoint = skeleton.restLocal[static_cast<size_t>(j)].rotation * modelFromJoint;
  forwardInJoint_ = glm::conjugate(modelFromJoint) * character.ragdoll().asset().modelForward;
}

void LookAtMeasure::observe(const Character& character, const Quat& askedLocal, const Vec3& worldTarget,
                            LookAtMetrics& out) {
  const Skeleton& skeleton = character.skeleton();
  const int parent = skeleton.parents[static_cast<size_t>(joint_)];
  localToModel(skeleton, character.displayLocals(), models_);
  const Transform bone = character.displayRoot() * models_[static_cast<size_t>(joint_)];
  const Transform above = character.displayRoot() * models_[static_cast<size_t>(parent)];
  out.worstHeadError = std::max(out.worstHeadError, angleBetween(bone.rotation, above.rotation * askedLocal));
  const Vec3 to = worldTarget - bone.translation;
  if (glm::length(to) > 1e-9) {
    const Vec3 aim = bone.rotation * forwardInJoint_;
    out.worstAimError =
        std::max(out.worstAimError, std::acos(std::clamp(glm::dot(aim, glm::normalize(to)), -1.0, 1.0)));
  }
  ++out.frames;
}

}  // namespace handoff
