// Scenario JSON, reading: the static world (gravity, ground, boxes, walls, steps).
#include "scenario/scenario_json_read.h"

#include <cmath>
#include <string>

namespace handoff::scenario_json {

ScenarioBox readBoxFields(const Reader& r, const json& object, const std::string& path) {
  ScenarioBox box;
  if (!Reader::find(object, "center")) r.fail(childPath(path, "center"), "missing (required)");
  box.center = r.vec3(object, path, "center", Vec3{0.0}, kPosition);
  box.halfExtents =
      r.vec3(object, path, "halfExtents", Vec3{0.5}, Range{0.0, kScenarioWorldExtent, true, false});
  box.yaw = r.number(object, path, "yaw", 0.0);
  box.friction = r.number(object, path, "friction", 0.8, kFriction);
  return box;
}

ScenarioWorld readWorld(const Reader& r, const json& value, const std::string& path) {
  r.expectObject(value, path);
  r.checkKeys(value, path, {"gravity", "ground", "boxes", "walls", "steps"});
  ScenarioWorld world;
  // Static boxes so far: boxes, walls and steps together are at most kScenarioMaxStaticBoxes.
  std::size_t staticBoxes = 0;
  const auto addBoxes = [&](std::size_t count, const std::string& at) {
    staticBoxes += count;
    if (staticBoxes > kScenarioMaxStaticBoxes) {
      r.fail(at, "the world's static boxes (boxes, walls and steps together) would number " +
                     std::to_string(staticBoxes) + "; at most " + std::to_string(kScenarioMaxStaticBoxes) +
                     " (kScenarioMaxStaticBoxes)");
    }
  };
  world.gravity = r.vec3(value, path, "gravity", world.gravity, Range{-1000.0, 1000.0, false, false});
  if (const json* ground = Reader::find(value, "ground")) {
    const std::string where = childPath(path, "ground");
    r.expectObject(*ground, where);
    r.checkKeys(*ground, where, {"enabled", "height", "friction"});
    world.ground.enabled = r.boolean(*ground, where, "enabled", true);
    world.ground.height = r.number(*ground, where, "height", 0.0, kPosition);
    world.ground.friction = r.number(*ground, where, "friction", 0.8, kFriction);
  }
  if (const json* boxes = Reader::find(value, "boxes")) {
    const std::string where = childPath(path, "boxes");
    r.expectArray(*boxes, where);
    r.checkCount(*boxes, where, kScenarioMaxStaticBoxes, "kScenarioMaxStaticBoxes");
    for (std::size_t i = 0; i < boxes->size(); ++i) {
      const std::string at = indexPath(where, i);
      r.expectObject((*boxes)[i], at);
      r.checkKeys((*boxes)[i], at, kBoxKeys);
      addBoxes(1, at);
      world.boxes.push_back(readBoxFields(r, (*boxes)[i], at));
    }
  }
  if (const json* walls = Reader::find(value, "walls")) {
    const std::string where = childPath(path, "walls");
    r.expectArray(*walls, where);
    r.checkCount(*walls, where, kScenarioMaxStaticBoxes, "kScenarioMaxStaticBoxes");
    for (std::size_t i = 0; i < walls->size(); ++i) {
      const std::string at = indexPath(where, i);
      const json& w = (*walls)[i];
      r.expectObject(w, at);
      r.checkKeys(w, at, {"from", "to", "height", "thickness", "friction"});
      ScenarioWall wall;
      for (const char* key : {"from", "to"}) {
        if (!Reader::find(w, key)) r.fail(childPath(at, key), "missing (required)");
      }
      wall.from = r.vec3(w, at, "from", wall.from, kPosition);
      wall.to = r.vec3(w, at, "to", wall.to, kPosition);
      if (wall.from.y != wall.to.y) {
        r.fail(childPath(at, "to"), "must be at the height of 'from' (y " +
                                        scenario_detail::formatNumber(wall.to.y) + " vs " +
                                        scenario_detail::formatNumber(wall.from.y) + ")");
      }
      if (std::hypot(wall.to.x - wall.from.x, wall.to.z - wall.from.z) < 1e-6) {
        r.fail(childPath(at, "to"), "must differ from 'from' (a wall needs a length)");
      }
      wall.height = r.number(w, at, "height", 2.5, Range{0.0, kScenarioWorldExtent, true, false});
      wall.thickness = r.number(w, at, "thickness", 0.2, Range{0.0, kScenarioWorldExtent, true, false});
      wall.friction = r.number(w, at, "friction", 0.8, kFriction);
      addBoxes(1, at);
      world.walls.push_back(wall);
    }
  }
  if (const json* steps = Reader::find(value, "steps")) {
    const std::string where = childPath(path, "steps");
    r.expectArray(*steps, where);
    r.checkCount(*steps, where, kScenarioMaxStaticBoxes, "kScenarioMaxStaticBoxes");
    for (std::size_t i = 0; i < steps->size(); ++i) {
      const std::string at = indexPath(where, i);
      const json& s = (*steps)[i];
      r.expectObject(s, at);
      r.checkKeys(s, at, {"count", "rise", "run", "width", "origin", "direction", "friction"});
      ScenarioSteps flight;
      flight.count = r.integer(s, at, "count", flight.count, 1, 500);
      flight.rise = r.number(s, at, "rise", flight.rise, Range{0.0, 2.0, true, false});
      flight.run = r.number(s, at, "run", flight.run, Range{0.0, 10.0, true, false});
      flight.width = r.number(s, at, "width", flight.width, Range{0.0, 100.0, true, false});
      flight.origin = r.vec3(s, at, "origin", flight.origin, kPosition);
      flight.direction = r.vec3(s, at, "direction", flight.direction, Range{-1e6, 1e6, false, false});
      if (flight.direction.y != 0.0 || std::hypot(flight.direction.x, flight.direction.z) < 1e-9) {
        r.fail(childPath(at, "direction"), "must be horizontal (y = 0) and non-zero");
      }
      flight.friction = r.number(s, at, "friction", flight.friction, kFriction);
      addBoxes(static_cast<std::size_t>(flight.count), childPath(at, "count"));
      world.steps.push_back(flight);
    }
  }
  return world;
}

}  // namespace handoff::scenario_json
