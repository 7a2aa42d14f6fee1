// Settle detector and supine/prone classifier (SPEC.md section 4).
#include "handoff/recovery.h"

#include <cmath>

namespace handoff {
namespace {

bool positiveFinite(double x) { return std::isfinite(x) && x > 0.0; }

// Float sums of dt (30 x 1/60) fall a few ulps short of the window; accept that much.
constexpr double kWindowSlack = 1e-9;

}  // namespace

const char* settleResetName(SettleReset reset) {
  switch (reset) {
    case SettleReset::None:
      return "none";
    case SettleReset::LinearSpeed:
      return "linear_speed";
    case SettleReset::AngularSpeed:
      return "angular_speed";
    case SettleReset::ExternalForce:
      return "external_force";
  }
  return "unknown";
}

SettleDetector::SettleDetector(const SettleSettings& settings)
    : settings_(settings), settingsValid_(validate(settings).ok()) {}

Status SettleDetector::validate(const SettleSettings& settings) {
  if (!positiveFinite(settings.window)) return Error{"settle window must be positive and finite"};
  if (!positiveFinite(settings.maxLinearSpeed))
    return Error{"settle maxLinearSpeed must be positive and finite"};
  if (!positiveFinite(settings.maxAngularSpeed))
    return Error{"settle maxAngularSpeed must be positive and finite"};
  return {};
}

SettleUpdate SettleDetector::report(bool accepted) const {
  SettleUpdate r;
  r.accepted = accepted;
  r.settled = settled_;
  r.timeInWindow = timeInWindow_;
  r.lastReset = lastReset_;
  return r;
}

SettleUpdate SettleDetector::update(double dt, const Vec3& pelvisLinearVelocity,
                                    const Vec3& pelvisAngularVelocity, bool externalForce) {
  if (!settingsValid_ || !positiveFinite(dt) || !isFinite(pelvisLinearVelocity) ||
      !isFinite(pelvisAngularVelocity)) {
    return report(false);
  }
  SettleReset breach = SettleReset::None;
  if (externalForce) {
    breach = SettleReset::ExternalForce;
  } else if (!(glm::length(pelvisLinearVelocity) < settings_.maxLinearSpeed)) {
    breach = SettleReset::LinearSpeed;
  } else if (!(glm::length(pelvisAngularVelocity) < settings_.maxAngularSpeed)) {
    breach = SettleReset::AngularSpeed;
  }
  if (breach != SettleReset::None) {
    timeInWindow_ = 0.0;
    settled_ = false;
    lastReset_ = breach;
  } else {
    timeInWindow_ += dt;
    settled_ = timeInWindow_ >= settings_.window * (1.0 - kWindowSlack);
  }
  return report(true);
}

void SettleDetector::reset() {
  timeInWindow_ = 0.0;
  settled_ = false;
  lastReset_ = SettleReset::None;
}

// ------------------------------------------------------------------------------------------

const char* facingName(Facing facing) {
  switch (facing) {
    case Facing::Undecided:
      return "undecided";
    case Facing::Supine:
      return "supine";
    case Facing::Prone:
      return "prone";
  }
  return "unknown";
}

Vec3 chestOutwardInWorld(const Quat& worldFromChestBodyRotation, const Vec3& chestForwardInBody) {
  const Vec3 v = worldFromChestBodyRotation * chestForwardInBody;
  const double len = glm::length(v);
  if (!std::isfinite(len) || len < 1e-12) return Vec3{0.0};
  return v / len;
}

FacingClassifier::FacingClassifier(const FacingSettings& settings)
    : settings_(settings), settingsValid_(validate(settings).ok()) {}

Status FacingClassifier::validate(const FacingSettings& settings) {
  if (!std::isfinite(settings.supineAbove) || !std::isfinite(settings.proneBelow)) {
    return Error{"facing thresholds must be finite"};
  }
  if (settings.supineAbove < -1.0 || settings.supineAbove > 1.0 || settings.proneBelow < -1.0 ||
      settings.proneBelow > 1.0) {
    return Error{"facing thresholds must lie in [-1, 1]"};
  }
  if (!(settings.proneBelow < settings.supineAbove)) {
    return Error{"facing proneBelow must be below supineAbove (the hold band between them prevents flicker)"};
  }
  return {};
}

FacingUpdate FacingClassifier::update(double chestUpDot) {
  FacingUpdate r;
  if (!settingsValid_ || !std::isfinite(chestUpDot)) {
    r.accepted = false;
    r.candidate = candidate_;
    r.inHoldBand = inHoldBand_;
    r.chestUpDot = lastDot_;
    return r;
  }
  if (chestUpDot > settings_.supineAbove) {
    candidate_ = Facing::Supine;
    inHoldBand_ = false;
  } else if (chestUpDot < settings_.proneBelow) {
    candidate_ = Facing::Prone;
    inHoldBand_ = false;
  } else {
    inHoldBand_ = true;  // On the side: keep the candidate, wait.
  }
  lastDot_ = chestUpDot;
  r.candidate = candidate_;
  r.inHoldBand = inHoldBand_;
  r.chestUpDot = chestUpDot;
  return r;
}

FacingUpdate FacingClassifier::update(const Quat& worldFromChestBodyRotation,
                                      const Vec3& chestForwardInBody) {
  if (!isFinite(worldFromChestBodyRotation) || !isFinite(chestForwardInBody)) {
    return update(std::nan(""));
  }
  const Vec3 outward = chestOutwardInWorld(worldFromChestBodyRotation, chestForwardInBody);
  if (glm::length(outward) < 0.5) return update(std::nan(""));
  return update(glm::dot(outward, kRecoveryUp));
}

void FacingClassifier::reset() {
  candidate_ = Facing::Undecided;
  inHoldBand_ = true;
  lastDot_ = 0.0;
}

}  // namespace handoff
