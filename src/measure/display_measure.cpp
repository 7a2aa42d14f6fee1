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
  const std::uint64_t recoveries = character.recoveries().total();
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

namespace {

/// Adds joint `j` (unless `tipOnly`) and its tip (the skeleton's end site, when it has one).
void addJointAndTip(const Skeleton& skeleton, int j, bool tipOnly, std::vector<DisplayPoint>& out) {
  const auto J = static_cast<size_t>(j);
  if (!tipOnly) out.push_back({j, Vec3{0.0}, skeleton.jointNames[J]});
  const Vec3& tip = J < skeleton.endSiteOffset.size() ? skeleton.endSiteOffset[J] : Vec3{0.0};
  if (glm::length(tip) > 0.0) out.push_back({j, tip, skeleton.jointNames[J] + " end"});
}

/// Where the character shows `points` (world). `models` is scratch of the skeleton's size.
void placeDisplayed(const Character& character, std::span<const DisplayPoint> points,
                    std::vector<Transform>& models, std::span<Vec3> out) {
  localToModel(character.skeleton(), character.displayLocals(), models);
  const Transform& root = character.displayRoot();
  for (size_t i = 0; i < points.size(); ++i)
    out[i] =
        root.transformPoint(models[static_cast<size_t>(points[i].joint)].transformPoint(points[i].offset));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ReturnMeasure

ReturnMeasure::ReturnMeasure(const Character& character)
    : tracked_(character.trackedJoints().begin(), character.trackedJoints().end()),
      pelvis_(character.ragdoll().asset().map[Slot::Pelvis]) {
  const Skeleton& skeleton = character.skeleton();
  const RagdollAsset& asset = character.ragdoll().asset();
  for (int j = 0; j < skeleton.jointCount(); ++j)
    addJointAndTip(skeleton, j, asset.bodyForJoint(j) >= 0, points_);
  const auto n = static_cast<size_t>(skeleton.jointCount());
  models_.resize(n);
  nowModels_.resize(n);
  beforeModels_.resize(n);
  nowBodies_.resize(asset.bodies.size());
  beforeBodies_.resize(asset.bodies.size());
  bodies_.resize(asset.bodies.size());
  lastBodies_.resize(asset.bodies.size());
  shown_.resize(points_.size() + tracked_.size());
  lastShown_.resize(shown_.size());
}

void ReturnMeasure::displayedPoints(const Character& character) {
  placeDisplayed(character, points_, models_, shown_);
  const Transform& root = character.displayRoot();
  for (size_t i = 0; i < tracked_.size(); ++i) {
    shown_[points_.size() + i] = root.transformPoint(models_[static_cast<size_t>(tracked_[i])].translation);
  }
}

void ReturnMeasure::observe(const Character& character, const Transform& worldFromRoot,
                            std::span<const Transform> animationNow,
                            std::span<const Transform> animationBefore, double time,
                            std::vector<ReturnMetrics>& out) {
  const CharacterState state = character.state();
  const RagdollAsset& asset = character.ragdoll().asset();
  displayedPoints(character);
  for (int b = 0; b < character.ragdoll().bodyCount(); ++b)
    bodies_[static_cast<size_t>(b)] = character.ragdoll().bodyPose(b).translation;
  const bool landed = character.landings().total() > landings_;
  landings_ = character.landings().total();
  const bool back =
      state == CharacterState::Animated && lastState_ != CharacterState::Animated &&
      (lastState_ == CharacterState::Recovering || lastState_ == CharacterState::Powered || landed);
  if (back) {
    ReturnMetrics m;
    m.time = time;
    m.from = landed ? "landing" : lastState_ == CharacterState::Recovering ? "getup" : "powered";
    out.push_back(m);
    open_ = true;
    quietFrames_ = 0;
  } else if (open_ && state != CharacterState::Animated) {
    open_ = false;  // left the animation again (a hit, a fall) before the blend ended
  } else if (open_ && !out.empty()) {
    ReturnMetrics& m = out.back();
    const double dt = character.ragdoll().animationStep();
    localToModel(character.skeleton(), animationNow, nowModels_);
    localToModel(character.skeleton(), animationBefore, beforeModels_);
    bodyPosesFromModels(asset, nowModels_, worldFromRoot, nowBodies_);
    bodyPosesFromModels(asset, beforeModels_, worldFromRoot, beforeBodies_);
    for (size_t b = 0; b < bodies_.size(); ++b) {
      const double speed = glm::length(bodies_[b] - lastBodies_[b]) / dt;
      const double own = glm::length(nowBodies_[b].translation - beforeBodies_[b].translation) / dt;
      m.worstBodySpeed = std::max(m.worstBodySpeed, speed);
      if (speed - own > m.worstBodySpeedExcess) {
        m.worstBodySpeedExcess = speed - own;
        m.worstBody = asset.bodies[b].name;
      }
    }
    for (size_t i = 0; i < shown_.size(); ++i) {
      const bool attachment = i < points_.size();
      const int joint = attachment ? points_[i].joint : tracked_[i - points_.size()];
      const Vec3 offset = attachment ? points_[i].offset : Vec3{0.0};
      const auto J = static_cast<size_t>(joint);
      const Vec3 ownNow = worldFromRoot.transformPoint(nowModels_[J].transformPoint(offset));
      const Vec3 ownBefore = worldFromRoot.transformPoint(beforeModels_[J].transformPoint(offset));
      const double own = glm::length(ownNow - ownBefore);
      const double jump = glm::length(shown_[i] - lastShown_[i]) - own;
      if (attachment) {
        m.attachmentOwnStep = std::max(m.attachmentOwnStep, own);
        if (jump > m.worstAttachmentJump) {
          m.worstAttachmentJump = jump;
          m.worstAttachment = points_[i].name;
        }
      } else if (joint == pelvis_) {
        m.worstPelvisJump = std::max(m.worstPelvisJump, jump);
      } else {
        m.worstFootJump = std::max(m.worstFootJump, jump);
        m.footOwnStep = std::max(m.footOwnStep, own);
      }
    }
    ++m.frames;
    quietFrames_ = character.blendWeight() > 0.0 ? 0 : quietFrames_ + 1;
    if (quietFrames_ >= 2) open_ = false;
  }
  lastShown_ = shown_;
  lastBodies_ = bodies_;
  lastState_ = state;
}

// ---------------------------------------------------------------------------------------------
// LimbLagMeasure

void LimbLagMeasure::begin(const Character& character, double rampTime, double time, LimbLagMetrics& out) {
  const Skeleton& skeleton = character.skeleton();
  const RagdollAsset& asset = character.ragdoll().asset();
  points_.clear();
  // The joints of the lagging bodies (a forearm's elbow, a hand's wrist) and their tips; the
  // bones below them without a body (fingers) turn with them and are not counted.
  for (int j = 0; j < skeleton.jointCount(); ++j) {
    const int body = asset.bodyForJoint(j);
    if (body >= 0 && character.ragdoll().authority(body) != Authority::Animation)
      addJointAndTip(skeleton, j, false, points_);
  }
  const auto n = static_cast<size_t>(skeleton.jointCount());
  models_.resize(n);
  nowModels_.resize(n);
  beforeModels_.resize(n);
  shown_.resize(points_.size());
  lastShown_.resize(points_.size());
  placeDisplayed(character, points_, models_, lastShown_);  // the display of the frame before the switch
  frameLags_.clear();
  out = LimbLagMetrics{};
  out.time = time;
  start_ = time;
  switchWindow_ = rampTime + 0.1;
  open_ = !points_.empty();
}

void LimbLagMeasure::observe(const Character& character, const Transform& worldFromRoot,
                             std::span<const Transform> animationNow,
                             std::span<const Transform> animationBefore, double time, LimbLagMetrics& out) {
  if (!open_) return;
  if (character.state() != CharacterState::Powered) {
    open_ = false;
    return;
  }
  placeDisplayed(character, points_, models_, shown_);
  localToModel(character.skeleton(), animationNow, nowModels_);
  localToModel(character.skeleton(), animationBefore, beforeModels_);
  double frameWorst = 0.0;
  for (size_t i = 0; i < points_.size(); ++i) {
    const auto J = static_cast<size_t>(points_[i].joint);
    const Vec3 animNow = worldFromRoot.transformPoint(nowModels_[J].transformPoint(points_[i].offset));
    const Vec3 animBefore = worldFromRoot.transformPoint(beforeModels_[J].transformPoint(points_[i].offset));
    const double lag = glm::length(shown_[i] - animNow);
    frameWorst = std::max(frameWorst, lag);
    if (lag > out.worstLag) {
      out.worstLag = lag;
      out.worstPoint = points_[i].name;
    }
    if (time - start_ <= switchWindow_ + 1e-9) {
      const double jump = glm::length(shown_[i] - lastShown_[i]) - glm::length(animNow - animBefore);
      out.worstSwitchOnJump = std::max(out.worstSwitchOnJump, jump);
    }
  }
  frameLags_.push_back(frameWorst);
  std::vector<double> sorted = frameLags_;
  const auto middle = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
  std::nth_element(sorted.begin(), middle, sorted.end());
  out.medianLag = *middle;
  ++out.frames;
  lastShown_ = shown_;
}

}  // namespace handoff
