// ScenarioSession: the animation it plays and the scenario events it applies (session_impl.h).
#include "runner/session_impl.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string_view>
#include <utility>

namespace handoff {

// ---------------------------------------------------------------------------------------------
// Animation and events

void ScenarioSession::Impl::sampleAt(double sceneTime, std::span<Transform> out) const {
  clip->sample(clipStart + clipSpeed * (sceneTime - clipSceneStart), wrap, out);
}

// The look-at, as a game's gaze system: the bone's local rotation turned toward the target from
// its parent as displayed at the last frame (at t = 0, as the animation poses it).
void ScenarioSession::Impl::lookAt(std::span<Transform> animation) {
  if (lookAtJoint < 0) return;
  const Skeleton& skeleton = l->character->skeleton;
  const auto joint = static_cast<size_t>(lookAtJoint);
  const auto parent = static_cast<size_t>(skeleton.parents[joint]);
  Transform worldFromParent;
  if (ch) {
    localToModel(skeleton, ch->displayLocals(), lookAtModels);
    worldFromParent = ch->displayRoot() * lookAtModels[parent];
  } else {
    localToModel(skeleton, animation, lookAtModels);
    worldFromParent = root * lookAtModels[parent];
  }
  Transform& local = animation[joint];
  local.rotation = lookAtLocalRotation(skeleton, lookAtJoint, l->asset->modelForward, worldFromParent,
                                       local.translation, s.lookAt->target, local.rotation);
  lookAtAsked = local.rotation;
}

bool ScenarioSession::Impl::due(double t) const {
  return nextEvent < s.events.size() && s.events[nextEvent].time <= t + 1e-9;
}

bool ScenarioSession::Impl::applyPre(const ScenarioEvent& e) {
  switch (e.type()) {
    case EventType::Teleport: {
      const auto& p = std::get<ScenarioEvent::Teleport>(e.payload);
      root = Transform{yawRotation(p.yaw), p.position};
      teleportPending = true;
      return true;
    }
    case EventType::Clip: {
      const auto& p = std::get<ScenarioEvent::Clip>(e.payload);
      clipHold = switches[nextSwitch++];
      clip = clipHold.get();
      wrap = p.clip.wrap;
      clipStart = p.clip.startTime;
      clipSpeed = p.clip.speed;
      clipSceneStart = e.time;
      return true;
    }
    case EventType::Wall: {
      const auto& p = std::get<ScenarioEvent::Wall>(e.payload);
      world->addStaticBox(p.box.worldFromBox(), p.box.halfExtents, p.box.friction);
      boxes.push_back({p.box.worldFromBox(), p.box.halfExtents});
      return true;
    }
    default:
      return false;
  }
}

void ScenarioSession::Impl::collectDue(double t) {
  postEvents.clear();
  while (due(t)) {
    const size_t i = nextEvent++;
    if (!applyPre(s.events[i])) postEvents.push_back(i);
  }
}

void ScenarioSession::Impl::notRun(const ScenarioEvent& e, const std::string& why) {
  const std::string line = std::string(eventTypeName(e.type())) + " at " +
                           std::to_string(e.time).substr(0, 5) + " s: not run: " + why;
  if (std::find(result.notRun.begin(), result.notRun.end(), line) == result.notRun.end()) {
    result.notRun.push_back(line);
  }
}

void ScenarioSession::Impl::runPostEvents(double t) {
  for (size_t i : postEvents) {
    const ScenarioEvent& e = s.events[i];
    switch (e.type()) {
      case EventType::Ragdoll:
        commit(t);
        break;
      case EventType::Impulse:
        impulse(e, t);
        break;
      case EventType::GetUpAllowed:
        ch->setGetUpAllowed(std::get<ScenarioEvent::GetUpAllowed>(e.payload).allowed);
        break;
      case EventType::Powered:
        powered(e, t);
        break;
      case EventType::Partial:
        partial(e, t);
        break;
      case EventType::LimbLag:
        limbLag(e, t);
        break;
      case EventType::Animate:
        if (Status st = ch->goAnimated(std::get<ScenarioEvent::Animate>(e.payload).blendTime); !st) {
          notRun(e, st.error());
        }
        break;
      case EventType::Grab:
      case EventType::Drop: {
        const auto* g = std::get_if<ScenarioEvent::Grab>(&e.payload);
        const std::string& name = g ? g->prop : std::get<ScenarioEvent::Drop>(e.payload).prop;
        const auto it = std::find_if(s.props.begin(), s.props.end(),
                                     [&](const ScenarioProp& p) { return p.name == name; });
        if (it == s.props.end()) {
          notRun(e, "no prop named '" + name + "'");
          break;
        }
        const int prop = propIndex[static_cast<size_t>(it - s.props.begin())];
        if (Status st = g ? ch->grabProp(prop) : ch->dropProp(prop); !st) notRun(e, st.error());
        break;
      }
      case EventType::End:
      default:
        break;
    }
  }
}

void ScenarioSession::Impl::commit(double t) {
  // The animation sampled 1/8 frame before: a nearly instantaneous velocity (SPEC section 3,
  // "sample more densely"). Right after a teleport it is sampled at the new place, as a game
  // would: the jump stays between the older samples and gives no velocity.
  sampleAt(t - dt / 8, dense);
  const Quat asked = lookAtAsked;
  lookAt(dense);
  lookAtAsked = asked;  // the frame's own input keeps its figure
  const AnimationInput d{t - dt / 8, root, dense, false};
  measure(ch->goRagdoll(&d), t, "handoff");
}

void ScenarioSession::Impl::impulse(const ScenarioEvent& e, double t) {
  const RagdollAsset& asset = *l->asset;
  const auto& p = std::get<ScenarioEvent::Impulse>(e.payload);
  if (p.knockback) {
    knockback(e, t);
    return;
  }
  const int b = runner_detail::bodyNamed(asset, l->character->skeleton, p.body);
  if (b < 0) {
    notRun(e, "no body for '" + p.body + "'");
    return;
  }
  const Transform bodyPose = ch->ragdoll().bodyPose(b);
  const Vec3 j = p.impulseSpace == ImpulseSpace::Root ? root.transformVector(p.impulse) : p.impulse;
  Vec3 point = bodyPose.translation;
  if (p.point) point = p.pointSpace == PointSpace::Body ? bodyPose.transformPoint(*p.point) : *p.point;
  const bool wasAnimated = ch->state() == CharacterState::Animated;
  const size_t before = ch->handoffs().total();
  const double energyBefore = energy.energy();
  const Status st = ch->applyImpulse(b, j, point);
  // A hit on a ragdoll is work done on it (HandoffMetrics::energyWork).
  if (st) energy.addWork(energy.energy() - energyBefore);
  if (st && wasAnimated && ch->state() == CharacterState::Powered && ch->handoffs().total() > before) {
    // The hit reaction: the Character went powered by itself, then took the impulse.
    measure(ch->handoffs().back(), t, "powered");
    result.hitReactions.push_back(hit.begin(*ch, b, j, t));
    openHit = static_cast<int>(result.hitReactions.size()) - 1;
  }
  if (!st) {
    notRun(e, st.error());
  } else if (follow.open() && ch->state() != CharacterState::Animated) {
    HandoffMetrics& hm = result.handoffs[static_cast<size_t>(openHandoff)];
    follow.addImpulse(*ch, b, j, hm);
    if (handoff.firstStepPending()) {
      char text[160];
      std::snprintf(text, sizeof text, "%.0f N s on %s (%.1f kg) at %.3f s", glm::length(j),
                    asset.bodies[static_cast<size_t>(b)].name.c_str(), world->mass(ch->ragdoll().body(b)), t);
      hm.firstStepImpulse = text;
    }
  }
}

// A knock-back (Character::knockBack): the commit, measured as a ragdoll handoff, then the throw.
void ScenarioSession::Impl::knockback(const ScenarioEvent& e, double t) {
  const auto& p = std::get<ScenarioEvent::Impulse>(e.payload);
  const Vec3 j = p.impulseSpace == ImpulseSpace::Root ? root.transformVector(p.impulse) : p.impulse;
  const size_t before = ch->handoffs().total();
  KnockbackMetrics k;
  k.time = t;
  k.impulse = glm::length(j);
  k.flightsBefore = ch->flights().total();
  k.landingsBefore = ch->landings().total();
  k.recoveriesBefore = ch->recoveries().total();
  k.pelvisStart = ch->ragdoll().bodyPose(pelvisBody).translation;
  const double energyBefore = energy.energy();
  const Status st = ch->knockBack(j);
  if (st) energy.addWork(energy.energy() - energyBefore);  // on a ragdoll already: work done on it
  if (!st) {
    notRun(e, st.error());
    return;
  }
  if (ch->handoffs().total() > before) measure(ch->handoffs().back(), t, "handoff");
  double mass = 0.0;
  for (int b = 0; b < ch->ragdoll().bodyCount(); ++b) mass += world->mass(ch->ragdoll().body(b));
  k.velocityChange = k.impulse / mass;
  result.knockbacks.push_back(k);
  if (follow.open()) {
    // Every body's velocity changes by j / total mass: the allowance of one body taking its share.
    HandoffMetrics& hm = result.handoffs[static_cast<size_t>(openHandoff)];
    const int b = pelvisBody;
    follow.addImpulse(*ch, b, j * (world->mass(ch->ragdoll().body(b)) / mass), hm);
    if (handoff.firstStepPending()) {
      char text[160];
      std::snprintf(text, sizeof text, "a %.0f N s knock-back over every body at %.3f s", k.impulse, t);
      hm.firstStepImpulse = text;
    }
  }
}

void ScenarioSession::Impl::powered(const ScenarioEvent& e, double t) {
  const auto& p = std::get<ScenarioEvent::Powered>(e.payload);
  PoweredSettings ps = cs.hitReaction;
  ps.solver = s.settings.driveSolver;
  ps.weight = p.weight;
  ps.rampTime = p.rampTime;
  ps.pinPelvisAndFeet = p.pinned;
  ps.bodyWeights.clear();
  ps.returnWhenSettled = false;  // the scenario says when (`animate`)
  const size_t before = ch->handoffs().total();
  poweredEntry(e, t, ch->goPowered(ps), before);
}

void ScenarioSession::Impl::partial(const ScenarioEvent& e, double t) {
  const auto& p = std::get<ScenarioEvent::Partial>(e.payload);
  const std::vector<double> weights = partialWeights(p);
  const size_t before = ch->handoffs().total();
  if (ch->state() == CharacterState::Powered) {
    if (Status st = ch->setBodyWeights(weights); !st) notRun(e, st.error());
  } else {
    PoweredSettings ps = cs.hitReaction;
    ps.solver = s.settings.driveSolver;
    ps.returnWhenSettled = false;
    poweredEntry(e, t, ch->goPartial(weights, p.rampTime, ps), before);
  }
}

void ScenarioSession::Impl::limbLag(const ScenarioEvent& e, double t) {
  const auto& p = std::get<ScenarioEvent::LimbLag>(e.payload);
  LimbLagSettings lag;
  if (!p.slots.empty()) lag.slots = p.slots;
  lag.weight = p.weight;
  lag.rampTime = p.rampTime;
  PoweredSettings ps;
  ps.solver = s.settings.driveSolver;
  const size_t before = ch->handoffs().total();
  const Status st = ch->goLimbLag(lag, ps);
  poweredEntry(e, t, st, before);
  if (!st) return;
  result.limbLags.emplace_back();
  limbLagMeasure.begin(*ch, lag.rampTime, t, result.limbLags.back());
}

// Per asset body, the physics weight a `partial` event gives it: its own entry (bone or slot
// name), else the largest weight of the regions containing its slot, else 0.
std::vector<double> ScenarioSession::Impl::partialWeights(const ScenarioEvent::Partial& p) const {
  const RagdollAsset& asset = *l->asset;
  const size_t bodyCount = asset.bodies.size();
  std::vector<double> weights(bodyCount, 0.0);
  for (size_t b = 0; b < bodyCount; ++b) {
    for (int slot = 0; slot < static_cast<int>(Slot::Count); ++slot) {
      if (asset.bodyForSlot(static_cast<Slot>(slot)) != static_cast<int>(b)) continue;
      for (const auto& [region, w] : p.regions) {
        if (regionContains(region, static_cast<Slot>(slot))) weights[b] = std::max(weights[b], w);
      }
    }
  }
  for (const auto& [name, w] : p.bodies) {
    const int b = runner_detail::bodyNamed(asset, l->character->skeleton, name);
    if (b >= 0) weights[static_cast<size_t>(b)] = w;
  }
  return weights;
}

void ScenarioSession::Impl::poweredEntry(const ScenarioEvent& e, double t, const Status& st,
                                         size_t recordsBefore) {
  if (!st) {
    notRun(e, st.error());
  } else if (ch->handoffs().total() > recordsBefore) {
    measure(ch->handoffs().back(), t, "powered");
  }
}

// ---------------------------------------------------------------------------------------------
// Adding events

Status ScenarioSession::Impl::prepareEvent(const ScenarioEvent& e, size_t index) {
  if (const auto* c = std::get_if<ScenarioEvent::Clip>(&e.payload)) {
    Result<Clip> loaded = runner_detail::loadSwitchClip(*cache, options, s, *l, c->clip);
    if (!loaded) return Error{loaded.error()};
    size_t before = 0;  // `clip` events ahead of this one
    for (size_t i = 0; i < index; ++i) before += s.events[i].type() == EventType::Clip ? 1 : 0;
    switches.insert(switches.begin() + static_cast<std::ptrdiff_t>(before),
                    std::make_shared<const Clip>(std::move(loaded).value()));
  }
  const auto* g = std::get_if<ScenarioEvent::GetUpAllowed>(&e.payload);
  if (g && g->allowed && !getUp(Facing::Supine) && !getUp(Facing::Prone)) {
    // A run of the saved scenario loads the get-up clips at the start; the Character reads
    // them only once a get-up is allowed, so setting them now is the same.
    Result<std::pair<GetUpClip, GetUpClip>> getUps =
        runner_detail::loadScenarioGetUps(*cache, options, s, *l);
    if (!getUps) return Error{getUps.error()};
    supine = std::move(getUps->first);
    prone = std::move(getUps->second);
    ch->setGetUpClips(supine, prone);
  }
  return {};
}

}  // namespace handoff
