// Scenario JSON, reading: one timed event of each type.
#include "scenario/scenario_json_read.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace handoff::scenario_json {

ScenarioEvent readEvent(const Reader& r, const json& value, const std::string& path) {
  r.expectObject(value, path);
  const json* typeValue = Reader::find(value, "type");
  if (!typeValue) r.fail(childPath(path, "type"), "missing (required)");
  const EventType type = r.choiceOf(*typeValue, childPath(path, "type"), kEventTypes, "event type");
  const std::string context = " for a '" + std::string(eventTypeName(type)) + "' event";

  ScenarioEvent event;
  switch (type) {
    case EventType::Ragdoll:
      r.checkKeys(value, path, kEventKeys, context);
      event.payload = ScenarioEvent::Ragdoll{};
      break;
    case EventType::Impulse: {
      r.checkKeys(
          value, path,
          concat(kEventKeys, Keys{"body", "impulse", "impulseSpace", "point", "pointSpace", "knockback"}),
          context);
      ScenarioEvent::Impulse impulse;
      impulse.knockback = r.boolean(value, path, "knockback", false);
      if (impulse.knockback) {
        // A knock-back throws the whole character (Character::knockBack): no body, no point.
        for (const char* key : {"body", "point", "pointSpace"}) {
          if (Reader::find(value, key))
            r.fail(childPath(path, key),
                   "not allowed with \"knockback\": true (the impulse is spread over "
                   "every body by its mass)");
        }
      } else {
        if (!Reader::find(value, "body")) r.fail(childPath(path, "body"), "missing (required)");
        impulse.body = r.string(value, path, "body", "", false);
      }
      if (!Reader::find(value, "impulse")) r.fail(childPath(path, "impulse"), "missing (required)");
      impulse.impulse = r.vec3(value, path, "impulse", Vec3{0.0}, kImpulse);
      impulse.impulseSpace = r.choice(value, path, "impulseSpace", ImpulseSpace::World, kImpulseSpaces);
      if (const json* point = Reader::find(value, "point")) {
        impulse.point = r.toVec3(*point, childPath(path, "point"), kPosition);
      }
      impulse.pointSpace = r.choice(value, path, "pointSpace", PointSpace::Body, kPointSpaces);
      event.payload = impulse;
      break;
    }
    case EventType::Teleport: {
      r.checkKeys(value, path, concat(kEventKeys, Keys{"position", "yaw"}), context);
      ScenarioEvent::Teleport teleport;
      if (!Reader::find(value, "position")) r.fail(childPath(path, "position"), "missing (required)");
      teleport.position = r.vec3(value, path, "position", Vec3{0.0}, kPosition);
      teleport.yaw = r.number(value, path, "yaw", 0.0);
      event.payload = teleport;
      break;
    }
    case EventType::Powered: {
      r.checkKeys(value, path, concat(kEventKeys, Keys{"weight", "rampTime", "pinned"}), context);
      ScenarioEvent::Powered powered;
      powered.pinned = r.boolean(value, path, "pinned", powered.pinned);
      powered.weight = r.number(value, path, "weight", powered.weight, kUnit);
      powered.rampTime = r.number(value, path, "rampTime", powered.rampTime, kDuration);
      event.payload = powered;
      break;
    }
    case EventType::Partial: {
      r.checkKeys(value, path, concat(kEventKeys, Keys{"bodies", "regions", "rampTime"}), context);
      ScenarioEvent::Partial partial;
      if (const json* bodies = Reader::find(value, "bodies")) {
        const std::string where = childPath(path, "bodies");
        r.expectObject(*bodies, where);
        r.checkCount(*bodies, where, kScenarioMaxNames, "kScenarioMaxNames");
        for (auto it = bodies->begin(); it != bodies->end(); ++it) {
          if (it.key().empty()) r.fail(where, "empty body name");
          partial.bodies[it.key()] = r.toNumber(it.value(), childPath(where, it.key()), kUnit);
        }
      }
      if (const json* regions = Reader::find(value, "regions")) {
        const std::string where = childPath(path, "regions");
        r.expectObject(*regions, where);
        for (auto it = regions->begin(); it != regions->end(); ++it) {
          const std::optional<BodyRegion> region = bodyRegionFromName(it.key());
          if (!region) {
            std::vector<std::string> names;
            for (int i = 0; i < static_cast<int>(BodyRegion::Count); ++i) {
              names.emplace_back(bodyRegionName(static_cast<BodyRegion>(i)));
            }
            std::string message =
                "unknown region '" + it.key() + "'" + didYouMean(it.key(), names) + "; expected one of";
            for (std::size_t i = 0; i < names.size(); ++i) message += (i ? ", " : " ") + names[i];
            r.fail(where, message);
          }
          partial.regions[*region] = r.toNumber(it.value(), childPath(where, it.key()), kUnit);
        }
      }
      if (partial.bodies.empty() && partial.regions.empty()) {
        r.fail(path, "a 'partial' event needs 'bodies' or 'regions' with at least one weight");
      }
      partial.rampTime = r.number(value, path, "rampTime", partial.rampTime, kDuration);
      event.payload = partial;
      break;
    }
    case EventType::LimbLag: {
      r.checkKeys(value, path, concat(kEventKeys, Keys{"slots", "weight", "rampTime"}), context);
      ScenarioEvent::LimbLag lag;
      if (const json* slots = Reader::find(value, "slots")) {
        const std::string where = childPath(path, "slots");
        const std::vector<std::string> names = r.nameList(*slots, where, "a slot name");
        for (std::size_t i = 0; i < names.size(); ++i) {
          const std::optional<Slot> slot = slotFromName(names[i]);
          if (!slot) {
            std::vector<std::string> known;
            for (int k = 0; k < static_cast<int>(Slot::Count); ++k)
              known.emplace_back(slotName(static_cast<Slot>(k)));
            r.fail(indexPath(where, i), "unknown slot '" + names[i] + "'" + didYouMean(names[i], known));
          }
          lag.slots.push_back(*slot);
        }
        if (lag.slots.empty())
          r.fail(where, "must list at least one slot (leave it out for the forearms and hands)");
      }
      lag.weight = r.number(value, path, "weight", lag.weight, Range{0.0, 1.0, true, false});
      lag.rampTime = r.number(value, path, "rampTime", lag.rampTime, kDuration);
      event.payload = lag;
      break;
    }
    case EventType::Animate: {
      r.checkKeys(value, path, concat(kEventKeys, Keys{"blendTime"}), context);
      ScenarioEvent::Animate animate;
      animate.blendTime = r.number(value, path, "blendTime", animate.blendTime, kDuration);
      event.payload = animate;
      break;
    }
    case EventType::GetUpAllowed: {
      r.checkKeys(value, path, concat(kEventKeys, Keys{"allowed"}), context);
      ScenarioEvent::GetUpAllowed allowed;
      allowed.allowed = r.boolean(value, path, "allowed", true);
      event.payload = allowed;
      break;
    }
    case EventType::Wall:
      r.checkKeys(value, path, concat(kEventKeys, kBoxKeys), context);
      event.payload = ScenarioEvent::Wall{readBoxFields(r, value, path)};
      break;
    case EventType::Clip:
      r.checkKeys(value, path, concat(kEventKeys, kClipKeys), context);
      event.payload = ScenarioEvent::Clip{readClipFields(r, value, path)};
      break;
    case EventType::Grab:
    case EventType::Drop: {
      r.checkKeys(value, path, concat(kEventKeys, Keys{"prop"}), context);
      if (!Reader::find(value, "prop")) r.fail(childPath(path, "prop"), "missing (required)");
      std::string prop = r.string(value, path, "prop", "", false);
      if (type == EventType::Grab) {
        event.payload = ScenarioEvent::Grab{std::move(prop)};
      } else {
        event.payload = ScenarioEvent::Drop{std::move(prop)};
      }
      break;
    }
    case EventType::End:
      r.checkKeys(value, path, kEventKeys, context);
      event.payload = ScenarioEvent::End{};
      break;
  }
  event.time = r.requiredNumber(value, path, "time", kTime);
  event.label = r.string(value, path, "label", "");
  return event;
}

}  // namespace handoff::scenario_json
