// Humanoid mapping: structure finds the chains, names (or proportions) pick the joints in them.
#include "asset_internal.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>

namespace handoff {
using namespace asset_detail;

namespace {

// Name cores per slot, most specific first (see nameKey: side tokens and rig prefixes removed).
// "shoulder" is the upper arm in BVH rigs (Boxing, DeepMimic) but the clavicle in Mixamo/CMU,
// where "arm" comes first on the chain and wins because it is tried first.
// Name conventions of the rig families (Mixamo, Unity, Unreal, CC3/CC4, Rigify and the Blender
// metarig, VRoid, DAZ Genesis, MakeHuman/MPFB and MHX, CMU, Boxing, DeepMimic, Biped): the name's
// last tokens (nameIs) after side markers and rig prefixes are removed. DAZ's "ShldrBend" and
// "ThighBend" are its upper limbs, its "Twist" bones helpers.
const std::vector<std::string> kUpperArmNames = {"upperarm", "arm",       "uparm",
                                                 "humerus",  "shldrbend", "shoulder"};
const std::vector<std::string> kLowerArmNames = {"forearm", "lowerarm", "elbow",
                                                 "lowarm",  "loarm",    "forearmbend"};
const std::vector<std::string> kHandNames = {"hand", "wrist"};
const std::vector<std::string> kUpperLegNames = {"upperleg", "upleg", "thigh", "thighbend", "hip", "femur"};
const std::vector<std::string> kLowerLegNames = {"lowerleg", "leg",    "shin",  "calf",
                                                 "knee",     "lowleg", "loleg", "shank"};
const std::vector<std::string> kFootNames = {"foot", "ankle"};
const std::vector<std::string> kPelvisNames = {"hips", "pelvis", "hip"};

bool namedAs(const Skeleton& s, int joint, const std::vector<std::string>& names) {
  const NameKey key = nameKey(s.jointNames[static_cast<size_t>(joint)]);
  if (key.helper) return false;
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return nameIs(key, n); });
}

// Proportions (Drillis & Contini 1966, segment lengths / stature): thigh 0.245, upper arm 0.186,
// forearm 0.146, hand 0.108 — expressed relative to the thigh, the bone the legs give us.
constexpr double kUpperArmPerThigh = 0.76;
constexpr double kForearmPerThigh = 0.60;
constexpr double kHandPerThigh = 0.44;

int firstByNames(const Skeleton& s, const std::vector<int>& path, const std::vector<std::string>& names,
                 size_t from = 0) {
  for (const std::string& name : names) {
    for (size_t i = from; i < path.size(); ++i) {
      const NameKey key = nameKey(s.jointNames[static_cast<size_t>(path[i])]);
      if (!key.helper && nameIs(key, name)) return static_cast<int>(i);
    }
  }
  return -1;
}

struct Chain {
  int branch = -1;  ///< Joint the chain hangs from (pelvis or a spine joint).
  int root = -1;    ///< First joint of the chain (a child of `branch`).
  std::vector<int> path;
  Vec3 endPoint{0.0};                    ///< Far end (toe or fingertip), possibly an end-site tip.
  int upper = -1, lower = -1, end = -1;  ///< Indices into path, -1 when absent.
  bool byName = false;
  double sideValue = 0.0;  ///< Along the character's right.
  char side = 0;
  char nameSide = 0;
};

std::string jointName(const Skeleton& s, int j) {
  return j >= 0 ? s.jointNames[static_cast<size_t>(j)] : "-";
}

std::string pathString(const Skeleton& s, const std::vector<int>& path) {
  std::string out;
  for (int j : path) {
    if (!out.empty()) out += '>';
    out += jointName(s, j);
  }
  return out;
}

Finding note(Finding::Severity severity, std::string code, std::string subject, std::string message) {
  return Finding{severity, std::move(code), std::move(subject), std::move(message)};
}

class Mapper {
 public:
  explicit Mapper(const Skeleton& s) : s_(s), info_(s) {}

  Result<HumanoidMap> run(std::vector<Finding>* notes);
  /// After run(): how each slot was decided and the confidence of that decision.
  std::array<SlotDecision, kSlotCount> decisions() const { return decisions_; }
  Vec3 forward() const { return forward_; }

 private:
  bool findPelvis();
  bool reachesFloor(int joint) const;
  /// Legs off `p` beside its hips-named child (findPelvis): paths from p to the leaf and the crown.
  bool splitBeside(int p, const std::vector<int>& toLeaf, const std::vector<int>& toCrown, double body) const;
  void findLegs();
  int detachedEnd(const Chain& chain, const std::vector<std::string>& names) const;
  int detachedHand(const Chain& arm) const;
  void analyseLeg(Chain& leg);
  Vec3 computeForward();
  void findArms();
  void analyseArm(Chain& arm, double thigh);
  void assignSides(std::vector<Chain>& chains, bool legs);
  void findSpineAndHead();
  std::string candidates() const;

  const Skeleton& s_;
  SkeletonInfo info_;
  HumanoidMap map_;
  std::vector<Finding> notes_;
  int crown_ = -1;   // Highest leaf joint.
  int pelvis_ = -1;  // The pelvis slot: where legs and spine split, or the hips bone just above.
  int split_ = -1;   // Where legs and spine split.
  int namedHead_ = -1;
  bool pelvisByName_ = false;
  bool headByName_ = false;
  double hipHeight_ = 0.0;
  /// A leg's subtree reaches within this fraction of the hip height of the floor (findLegs: 0.15,
  /// then 0.5 for legs whose feet hang elsewhere, as IK bones at the root).
  double floorReach_ = 0.15;
  double height_ = 0.0;
  std::vector<int> spinePath_;  // pelvis ... crown leaf
  std::vector<Chain> legs_, arms_;
  Vec3 forward_{0.0, 0.0, 1.0};
  int armBranch_ = -1;
  double thigh_ = 0.0;  // Mean thigh length, the arms' yardstick.
  std::array<SlotDecision, kSlotCount> decisions_{};
};

bool Mapper::findPelvis() {
  const int n = s_.jointCount();
  height_ = info_.topY - info_.floorY;
  if (!(height_ > 0.0)) return false;
  // The crown: the highest joint named "head" above 35 % of the height (a mascot's ears double it; hair, hats
  // and face bones above it are no heads), else the highest leaf point.
  double best = -std::numeric_limits<double>::infinity();
  std::vector<std::pair<double, int>> leaves;
  for (int j = 0; j < n; ++j) {
    if (!info_.children[static_cast<size_t>(j)].empty()) continue;
    const Vec3 p = info_.tip[static_cast<size_t>(j)].value_or(info_.pos(j));
    const double low = std::min(p.y, info_.pos(j).y);
    leaves.emplace_back(low, j);
    if (p.y > best) {
      best = p.y;
      crown_ = j;
    }
  }
  if (crown_ < 0) return false;
  double bestHead = -std::numeric_limits<double>::infinity();
  for (int j = 0; j < n; ++j) {
    if (info_.pos(j).y - info_.floorY < 0.35 * height_ || !namedAs(s_, j, {"head"})) continue;
    if (info_.pos(j).y > bestHead) {
      bestHead = info_.pos(j).y;
      namedHead_ = j;
    }
  }
  if (namedHead_ >= 0) crown_ = namedHead_;
  // The pelvis: the common ancestor of the crown and the lowest leaf whose split lies well above
  // the floor (IK and root bones at floor level split at the floor and are skipped).
  // With a named head the body's height is the head's: ears, antennae or hats far above it (a
  // mascot's 1.6 m ears) must not lift the split threshold above its hips.
  const double body = namedHead_ >= 0 ? info_.pos(namedHead_).y - info_.floorY : height_;
  std::sort(leaves.begin(), leaves.end());
  for (const auto& [y, leaf] : leaves) {
    const int p = info_.lca(leaf, crown_);
    if (p < 0 || p == crown_ || p == leaf) continue;
    if (info_.pos(p).y - info_.floorY >= 0.25 * body) {
      pelvis_ = p;
      break;
    }
    // Legs hanging off a floor-level root beside the hips (Quaternius: Root > Hips, UpperLeg.L,
    // UpperLeg.R): the branch toward the leaf starts high (a thigh, not a floor-level IK bone)
    // and the branch toward the crown is named as the hips.
    const std::vector<int> toLeaf = info_.path(p, leaf), toCrown = info_.path(p, crown_);
    if (!splitBeside(p, toLeaf, toCrown, body)) continue;
    pelvis_ = toCrown[1];
    split_ = p;
    pelvisByName_ = true;
    notes_.push_back(
        note(Finding::Severity::Info, "map_structure", jointName(s_, pelvis_),
             "legs hang off " + jointName(s_, p) + " beside the hips bone " + jointName(s_, pelvis_)));
    break;
  }
  if (pelvis_ < 0) return false;
  if (split_ >= 0) {
    hipHeight_ = info_.pos(pelvis_).y - info_.floorY;
    spinePath_ = info_.path(pelvis_, crown_);
    return true;
  }
  split_ = pelvis_;
  // Legs hanging off a spine bone (a Unity sample's Hips > Spine > thighs): the pelvis is the
  // hips bone just above the split, when one is named so.
  if (!namedAs(s_, pelvis_, kPelvisNames)) {
    for (int p = s_.parents[static_cast<size_t>(pelvis_)]; p != kNoParent;
         p = s_.parents[static_cast<size_t>(p)]) {
      if (glm::length(info_.pos(p) - info_.pos(split_)) > 0.2 * (info_.pos(split_).y - info_.floorY)) break;
      if (namedAs(s_, p, kPelvisNames)) {
        pelvis_ = p;
        pelvisByName_ = true;
        break;
      }
    }
  } else {
    pelvisByName_ = true;
  }
  hipHeight_ = info_.pos(pelvis_).y - info_.floorY;
  spinePath_ = info_.path(pelvis_, crown_);
  return true;
}

bool Mapper::splitBeside(int p, const std::vector<int>& toLeaf, const std::vector<int>& toCrown,
                         double body) const {
  return toLeaf.size() >= 2 && toCrown.size() >= 2 && toLeaf[1] != toCrown[1] &&
         info_.pos(toLeaf[1]).y - info_.floorY >= 0.25 * body && namedAs(s_, toCrown[1], kPelvisNames) &&
         info_.pos(toCrown[1]).y > info_.pos(p).y;
}

bool Mapper::reachesFloor(int joint) const {
  double low = std::numeric_limits<double>::infinity();
  for (const Vec3& p : info_.subtreePoints(joint)) low = std::min(low, p.y);
  return low - info_.floorY <= floorReach_ * hipHeight_;
}

void Mapper::findLegs() {
  // Children of the spine joints from the pelvis up to the split (other than the spine) whose
  // subtree reaches the floor; a child carrying both legs (CC's CC_Base_Pelvis beside the waist,
  // MHX's Hips beside Spine1) is opened up.
  std::vector<int> open;
  if (split_ != pelvis_ && info_.isAncestor(split_, pelvis_)) {
    // Legs beside the hips: the split's other children that start high and reach the floor.
    const double body = info_.pos(spinePath_.back()).y - info_.floorY;
    for (int c : info_.children[static_cast<size_t>(split_)]) {
      if (info_.isAncestor(c, pelvis_) || c == pelvis_) continue;
      if (info_.pos(c).y - info_.floorY >= 0.25 * body && reachesFloor(c)) open.push_back(c);
    }
  }
  const bool beside = !open.empty();
  // Legs ending above the floor (feet detached to the root as IK bones: Quaternius' Foot.L under
  // Root) are looked for when no chain reaches it.
  for (const double reach : {0.15, 0.5}) {
    floorReach_ = reach;
    for (size_t i = 0; i < spinePath_.size() && !beside; ++i) {
      const int joint = spinePath_[i];
      for (int c : info_.children[static_cast<size_t>(joint)]) {
        if (i + 1 < spinePath_.size() && c == spinePath_[i + 1]) continue;
        if (reachesFloor(c)) open.push_back(c);
      }
      if (joint == split_) break;
    }
    if (!open.empty()) break;
  }
  if (floorReach_ > 0.15 && !open.empty()) {
    notes_.push_back(
        note(Finding::Severity::Info, "map_structure", "legs",
             "no chain reaches the floor: legs taken from chains ending within half the hip height of it"));
  }
  std::vector<std::pair<double, int>> candidates;
  while (!open.empty()) {
    const int c = open.back();
    open.pop_back();
    std::vector<int> floorKids;
    int joint = c;
    for (;;) {  // down a chain of single floor-reaching children to where it splits
      floorKids.clear();
      for (int k : info_.children[static_cast<size_t>(joint)]) {
        if (reachesFloor(k)) floorKids.push_back(k);
      }
      if (floorKids.size() != 1) break;
      joint = floorKids[0];
    }
    if (floorKids.size() >= 2 && info_.pos(joint).y - info_.floorY > 0.5 * hipHeight_) {
      open.insert(open.end(), floorKids.begin(), floorKids.end());
      continue;
    }
    double low = std::numeric_limits<double>::infinity();
    for (const Vec3& p : info_.subtreePoints(c)) low = std::min(low, p.y);
    candidates.emplace_back(low, c);
  }
  std::sort(candidates.begin(), candidates.end());
  for (size_t i = 0; i < candidates.size() && i < 2; ++i) {
    Chain leg;
    leg.root = candidates[i].second;
    leg.branch = s_.parents[static_cast<size_t>(leg.root)];
    analyseLeg(leg);
    legs_.push_back(std::move(leg));
  }
}

void Mapper::analyseLeg(Chain& leg) {
  // Path to the lowest point of the subtree (the toe).
  int lowestJoint = leg.root;
  double low = std::numeric_limits<double>::infinity();
  for (int j = leg.root; j < s_.jointCount(); ++j) {
    if (!info_.isAncestor(leg.root, j)) continue;
    // The joint and its end-site tip; the first strictly lower point wins ties.
    const Vec3 tip = info_.tip[static_cast<size_t>(j)].value_or(info_.pos(j));
    const Vec3 lower = tip.y < info_.pos(j).y ? tip : info_.pos(j);
    if (lower.y < low - 1e-9) {
      low = lower.y;
      lowestJoint = j;
      leg.endPoint = lower;
    }
  }
  leg.path = info_.path(leg.root, lowestJoint);
  const auto& path = leg.path;
  // Names first.
  const int u = firstByNames(s_, path, kUpperLegNames);
  const int l = u >= 0 ? firstByNames(s_, path, kLowerLegNames, static_cast<size_t>(u + 1)) : -1;
  if (u >= 0 && l > u) {
    leg.upper = u;
    leg.lower = l;
    leg.byName = true;
    const int f = firstByNames(s_, path, kFootNames, static_cast<size_t>(l + 1));
    if (f > l) leg.end = f;
  }
  // Structure: hip = deepest joint within 15 % of the hip height below the pelvis; ankle = first
  // joint after it within 15 % of the hip height above the floor; knee = between, nearest mid-height.
  const double pelvisY = info_.pos(pelvis_).y;
  int hip = 0;
  for (size_t i = 0; i < path.size(); ++i) {
    if (pelvisY - info_.pos(path[i]).y <= 0.15 * hipHeight_) hip = static_cast<int>(i);
  }
  int ankle = -1;
  for (size_t i = static_cast<size_t>(hip) + 1; i < path.size(); ++i) {
    if (info_.pos(path[i]).y - info_.floorY <= 0.15 * hipHeight_) {
      ankle = static_cast<int>(i);
      break;
    }
  }
  const double endY = ankle >= 0 ? info_.pos(path[static_cast<size_t>(ankle)]).y : leg.endPoint.y;
  const double midY = 0.5 * (info_.pos(path[static_cast<size_t>(hip)]).y + endY);
  int knee = -1;
  double bestKnee = std::numeric_limits<double>::infinity();
  const int kneeEnd = ankle >= 0 ? ankle : static_cast<int>(path.size());
  for (int i = hip + 1; i < kneeEnd; ++i) {
    const double d = std::abs(info_.pos(path[static_cast<size_t>(i)]).y - midY);
    if (d < bestKnee) {
      bestKnee = d;
      knee = i;
    }
  }
  if (!leg.byName) {
    leg.upper = knee >= 0 ? hip : -1;
    leg.lower = knee;
    leg.end = knee >= 0 ? ankle : -1;
  } else if (leg.end < 0 && ankle > leg.lower) {
    leg.end = ankle;
  }
  if (leg.upper >= 0)
    leg.nameSide = nameKey(s_.jointNames[static_cast<size_t>(path[static_cast<size_t>(leg.upper)])]).side;
}

Vec3 Mapper::computeForward() {
  const auto horizontal = [](Vec3 v) { return Vec3{v.x, 0.0, v.z}; };
  // 1. Toes: ankle to the far end of the foot, projected on the floor.
  Vec3 sum{0.0};
  int feet = 0;
  for (const Chain& leg : legs_) {
    if (leg.end < 0) continue;
    const int ankle = leg.path[static_cast<size_t>(leg.end)];
    const auto far = info_.farthestInSubtree(ankle, info_.pos(ankle));
    const Vec3 v = far.point - info_.pos(ankle);
    const Vec3 h = horizontal(v);
    if (glm::length(v) > 0.0 && glm::length(h) > 0.3 * glm::length(v)) {
      sum += glm::normalize(h);
      ++feet;
    }
  }
  if (feet > 0 && glm::length(sum) > 0.5 * feet) {
    notes_.push_back(
        note(Finding::Severity::Info, "map_structure", "forward", "forward taken from the feet"));
    return glm::normalize(sum);
  }
  // 2. Bent knees point forward.
  sum = Vec3{0.0};
  for (const Chain& leg : legs_) {
    if (leg.upper < 0 || leg.lower < 0) continue;
    const Vec3 hip = info_.pos(leg.path[static_cast<size_t>(leg.upper)]);
    const Vec3 knee = info_.pos(leg.path[static_cast<size_t>(leg.lower)]);
    const Vec3 end = leg.end >= 0 ? info_.pos(leg.path[static_cast<size_t>(leg.end)]) : leg.endPoint;
    const Vec3 axis = directionOr(hip, end, kUp);
    const Vec3 offset = horizontal((knee - hip) - glm::dot(knee - hip, axis) * axis);
    if (glm::length(offset) > 0.03 * glm::length(end - hip)) sum += glm::normalize(offset);
  }
  if (glm::length(sum) > 0.5) {
    notes_.push_back(
        note(Finding::Severity::Info, "map_structure", "forward", "forward taken from the knee bend"));
    return glm::normalize(sum);
  }
  // 3. Side names: forward = (left - right) x up.
  for (const std::vector<Chain>* chains : {&legs_, &arms_}) {
    const Chain* left = nullptr;
    const Chain* right = nullptr;
    for (const Chain& c : *chains) {
      if (c.nameSide == 'L') left = &c;
      if (c.nameSide == 'R') right = &c;
    }
    if (left && right) {
      const Vec3 f = horizontal(glm::cross(info_.pos(left->root) - info_.pos(right->root), kUp));
      const Vec3 fl = horizontal(glm::cross(left->endPoint - right->endPoint, kUp));
      const Vec3 pick = glm::length(f) > 1e-6 ? f : fl;
      if (glm::length(pick) > 1e-6) {
        notes_.push_back(note(Finding::Severity::Warning, "map_side", "forward",
                              "feet and knees give no forward; taken from left/right bone names"));
        return glm::normalize(pick);
      }
    }
  }
  notes_.push_back(note(Finding::Severity::Warning, "map_side", "forward",
                        "no feet, bent knees or side names: assuming the character faces +Z"));
  return Vec3{0.0, 0.0, 1.0};
}

int Mapper::detachedEnd(const Chain& chain, const std::vector<std::string>& names) const {
  // A foot or hand parented elsewhere (Quaternius' and RobotExpressive's Foot.L under the root, an
  // IK rig's effector) that stands where the chain ends: the ragdoll's tree need not be the
  // skeleton's.
  int best = -1;
  double bestDistance = 0.08 * height_;
  for (int j = 0; j < s_.jointCount(); ++j) {
    if (!namedAs(s_, j, names) || info_.isAncestor(chain.root, j)) continue;
    const char side = nameKey(s_.jointNames[static_cast<size_t>(j)]).side;
    if (side != 0 && chain.nameSide != 0 && side != chain.nameSide) continue;
    const double d = glm::length(info_.pos(j) - chain.endPoint);
    if (d <= bestDistance) {
      bestDistance = d;
      best = j;
    }
  }
  return best;
}

int Mapper::detachedHand(const Chain& arm) const {
  // As a foot: a hand parented elsewhere (the root, an IK control) standing where the arm's chain
  // ends (the forearm's tip). When the forearm has no tip, where the wrist would be: a forearm's
  // length (0.6-1.5 of the expected) past the elbow, within 45 degrees of the upper arm's line.
  if (const int hand = detachedEnd(arm, kHandNames); hand >= 0 || arm.upper < 0 || arm.lower < 0) return hand;
  const Vec3 shoulder = info_.pos(arm.path[static_cast<size_t>(arm.upper)]);
  const Vec3 elbow = info_.pos(arm.path[static_cast<size_t>(arm.lower)]);
  if (!(glm::length(elbow - shoulder) > 0.0)) return -1;
  const Vec3 along = glm::normalize(elbow - shoulder);
  const double forearm = kForearmPerThigh * thigh_;
  int best = -1;
  double bestError = std::numeric_limits<double>::infinity();
  for (int j = 0; j < s_.jointCount(); ++j) {
    if (!namedAs(s_, j, kHandNames) || info_.isAncestor(arm.root, j)) continue;
    const char side = nameKey(s_.jointNames[static_cast<size_t>(j)]).side;
    if (side != 0 && arm.nameSide != 0 && side != arm.nameSide) continue;
    const Vec3 d = info_.pos(j) - elbow;
    const double length = glm::length(d);
    if (length < 0.6 * forearm || length > 1.5 * forearm || glm::dot(d, along) < std::cos(kPi / 4.0) * length)
      continue;
    const double error = glm::length(info_.pos(j) - (elbow + forearm * along));
    if (error < bestError) {
      bestError = error;
      best = j;
    }
  }
  return best;
}

void Mapper::findArms() {
  // Long branches off the spine path (excluding the pelvis): the two with the largest reach.
  std::vector<std::pair<double, Chain>> candidates;
  for (size_t i = 1; i < spinePath_.size(); ++i) {
    const int s = spinePath_[i];
    if (s == namedHead_) continue;  // hair, hats and face chains hang from the head
    for (int c : info_.children[static_cast<size_t>(s)]) {
      if (i + 1 < spinePath_.size() && c == spinePath_[i + 1]) continue;
      // Legs hanging off a spine bone are no arms.
      if (std::any_of(legs_.begin(), legs_.end(),
                      [&](const Chain& leg) { return info_.isAncestor(c, leg.root); }))
        continue;
      const auto far = info_.farthestInSubtree(c, info_.pos(s));
      if (far.distance < 0.3 * hipHeight_) continue;
      Chain arm;
      arm.branch = s;
      arm.root = c;
      arm.path = info_.path(c, far.joint);
      // A chain of helpers only (VRoid's J_Sec_ hair, skirt and bust chains) is no arm.
      if (std::all_of(arm.path.begin(), arm.path.end(),
                      [&](int j) { return nameKey(s_.jointNames[static_cast<size_t>(j)]).helper; }))
        continue;
      arm.endPoint = far.point;
      candidates.emplace_back(far.distance, std::move(arm));
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  // Names first: when one branch is named left and another right at its root (a clavicle
  // "shoulder.L" / "shoulder.R"), those two are the arms, whatever longer unnamed or one-sided
  // chains hang beside them (a backpack's robot arm "bagpack>robo_shoulder.L>...").
  const auto rootSide = [&](const Chain& c) {
    return nameKey(s_.jointNames[static_cast<size_t>(c.root)]).side;
  };
  const auto firstWithSide = [&](char side) {
    return std::find_if(candidates.begin(), candidates.end(),
                        [&](const auto& entry) { return rootSide(entry.second) == side; });
  };
  if (const auto left = firstWithSide('L'), right = firstWithSide('R');
      left != candidates.end() && right != candidates.end() &&
      (std::distance(candidates.begin(), std::max(left, right)) >= 2)) {
    notes_.push_back(note(Finding::Severity::Info, "map_structure", "arms",
                          "arms chosen by their side names: " + jointName(s_, left->second.root) + " and " +
                              jointName(s_, right->second.root) +
                              " over longer branches without side names"));
    std::pair<double, Chain> l = std::move(*left), r = std::move(*right);
    candidates.clear();
    candidates.push_back(std::move(l));
    candidates.push_back(std::move(r));
  }
  double thigh = 0.0;
  int thighs = 0;
  for (const Chain& leg : legs_) {
    if (leg.upper >= 0 && leg.lower >= 0) {
      thigh += glm::length(info_.pos(leg.path[static_cast<size_t>(leg.lower)]) -
                           info_.pos(leg.path[static_cast<size_t>(leg.upper)]));
      ++thighs;
    }
  }
  thigh = thighs > 0 ? thigh / thighs : 0.25 * height_;
  thigh_ = thigh;
  for (size_t i = 0; i < candidates.size() && i < 2; ++i) {
    Chain arm = std::move(candidates[i].second);
    analyseArm(arm, thigh);
    arms_.push_back(std::move(arm));
  }
  if (arms_.size() == 2) {
    armBranch_ = info_.lca(arms_[0].root, arms_[1].root);
  } else if (arms_.size() == 1) {
    armBranch_ = arms_[0].branch;
  }
}

void Mapper::analyseArm(Chain& arm, double thigh) {
  const auto& path = arm.path;
  const auto pos = [&](int i) {
    return i < static_cast<int>(path.size()) ? info_.pos(path[static_cast<size_t>(i)]) : arm.endPoint;
  };
  const int u = firstByNames(s_, path, kUpperArmNames);
  const int l = u >= 0 ? firstByNames(s_, path, kLowerArmNames, static_cast<size_t>(u + 1)) : -1;
  if (u >= 0 && l > u) {
    arm.upper = u;
    arm.lower = l;
    arm.byName = true;
    const int h = firstByNames(s_, path, kHandNames, static_cast<size_t>(l + 1));
    if (h > l) {
      arm.end = h;
    } else {
      // The first joint a forearm's length past the elbow.
      for (size_t i = static_cast<size_t>(l) + 1; i < path.size(); ++i) {
        if (glm::length(pos(static_cast<int>(i)) - pos(l)) >= 0.5 * kForearmPerThigh * thigh) {
          arm.end = static_cast<int>(i);
          break;
        }
      }
    }
  } else {
    const double upperLen = kUpperArmPerThigh * thigh;
    const double foreLen = kForearmPerThigh * thigh;
    const double handLen = kHandPerThigh * thigh;
    const int n = static_cast<int>(path.size());
    // A hand branches into fingers: the first branching joint an arm's length out, moved back
    // over joints that coincide with it (CMU's LeftHand / LeftFingerBase).
    int wrist = -1;
    double along = 0.0;
    for (int i = 1; i < n; ++i) {
      along += glm::length(pos(i) - pos(i - 1));
      if (info_.children[static_cast<size_t>(path[static_cast<size_t>(i)])].size() >= 2 && along >= thigh) {
        wrist = i;
        while (wrist > 2 && glm::length(pos(wrist) - pos(wrist - 1)) < 0.01 * thigh) --wrist;
        break;
      }
    }
    double best = std::numeric_limits<double>::infinity();
    const auto relative = [](double length, double expected) { return std::abs(length / expected - 1.0); };
    // Candidates: upper arm joint a, elbow b, wrist c (c == n: the tip, no hand joint).
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        const int cFirst = wrist >= 0 ? wrist : b + 1;
        const int cLast = wrist >= 0 ? wrist : n;
        for (int c = cFirst; c <= cLast; ++c) {
          if (c <= b) continue;
          const double du = glm::length(pos(b) - pos(a));
          const double df = glm::length(pos(c) - pos(b));
          if (du < 0.3 * upperLen || df < 0.3 * foreLen) continue;
          double cost = relative(du, upperLen) + relative(df, foreLen);
          if (c < n && glm::length(arm.endPoint - pos(c)) > 1e-9) {
            cost += relative(glm::length(arm.endPoint - pos(c)), handLen);
          }
          if (cost < best) {
            best = cost;
            arm.upper = a;
            arm.lower = b;
            arm.end = c < n ? c : -1;
          }
        }
      }
    }
  }
  if (arm.upper >= 0)
    arm.nameSide = nameKey(s_.jointNames[static_cast<size_t>(path[static_cast<size_t>(arm.upper)])]).side;
}

void Mapper::assignSides(std::vector<Chain>& chains, bool legs) {
  const Vec3 right = glm::normalize(glm::cross(forward_, kUp));
  for (Chain& c : chains) {
    Vec3 centroid{0.0};
    const std::vector<Vec3> points = info_.subtreePoints(c.root);
    for (const Vec3& p : points) centroid += p;
    centroid /= static_cast<double>(points.size());
    c.sideValue = glm::dot(centroid - info_.pos(c.branch), right);
  }
  const char* what = legs ? "leg" : "arm";
  if (chains.size() == 2) {
    const bool firstRight = chains[0].sideValue > chains[1].sideValue;
    chains[0].side = firstRight ? 'R' : 'L';
    chains[1].side = firstRight ? 'L' : 'R';
    if (chains[0].sideValue * chains[1].sideValue > 0.0) {
      notes_.push_back(note(
          Finding::Severity::Warning, "map_side", what,
          std::string("both ") + what + "s lie on the same side of the body; the more right one is right"));
    }
  } else if (chains.size() == 1) {
    chains[0].side = chains[0].sideValue > 0.0 ? 'R' : 'L';
  }
  // Names decide when they are unambiguous (one chain named left, the other right, or a single
  // named chain); geometry is then a check that reports a conflict. Only chains without side
  // names (or two named alike) keep the side geometry gave.
  const bool namesDecide = chains.size() == 2 ? chains[0].nameSide != 0 && chains[1].nameSide != 0 &&
                                                    chains[0].nameSide != chains[1].nameSide
                                              : chains.size() == 1 && chains[0].nameSide != 0;
  for (Chain& c : chains) {
    if (c.nameSide == 0 || c.nameSide == c.side) continue;
    notes_.push_back(note(
        Finding::Severity::Warning, namesDecide ? "map_side_conflict" : "map_side", jointName(s_, c.root),
        std::string("named ") + (c.nameSide == 'L' ? "left" : "right") + " but lies on the " +
            (c.side == 'L' ? "left" : "right") + " of a character facing (" + std::to_string(forward_.x) +
            ", " + std::to_string(forward_.z) + "); " +
            (namesDecide ? "the unambiguous names decide" : "geometry wins")));
    if (namesDecide) c.side = c.nameSide;
  }
}

void Mapper::findSpineAndHead() {
  // Index of the arm branch point on the spine path.
  const auto indexOf = [&](int joint) {
    const auto it = std::find(spinePath_.begin(), spinePath_.end(), joint);
    return it == spinePath_.end() ? -1 : static_cast<int>(it - spinePath_.begin());
  };
  int a = armBranch_ >= 0 ? indexOf(armBranch_) : -1;
  if (a < 0) a = 0;
  // Head: named "head" above the arms, else the deepest joint at least a quarter of the
  // arms-to-crown distance below the crown.
  // A crown leaf without an end site (glTF) is the skull's base or middle, not its top: extend
  // it by a typical head length (as the builder does).
  Vec3 crown = info_.pos(crown_);
  if (info_.tip[static_cast<size_t>(crown_)]) {
    crown = *info_.tip[static_cast<size_t>(crown_)];
  } else if (s_.parents[static_cast<size_t>(crown_)] != kNoParent) {
    crown += 0.2 * hipHeight_ * directionOr(info_.pos(s_.parents[static_cast<size_t>(crown_)]), crown, kUp);
  }
  int head = -1;
  for (size_t i = static_cast<size_t>(a) + 1; i < spinePath_.size(); ++i) {
    if (namedAs(s_, spinePath_[i], {"head"})) {
      head = static_cast<int>(i);
      break;
    }
  }
  if (head < 0) {
    // A head with a face rig (the Blender metarig's spine.006 > face > brows, lips, ears): the
    // first joint above the arms that fans out into three or more chains, moved back over joints
    // that coincide with it. Never the highest leaf, a brow or a hair bone.
    for (size_t i = static_cast<size_t>(a) + 1; i < spinePath_.size(); ++i) {
      if (info_.children[static_cast<size_t>(spinePath_[i])].size() < 3) continue;
      head = static_cast<int>(i);
      while (head > a + 1 &&
             glm::length(info_.pos(spinePath_[static_cast<size_t>(head)]) -
                         info_.pos(spinePath_[static_cast<size_t>(head - 1)])) < 0.005 * height_)
        --head;
      break;
    }
  }
  if (head >= 0) headByName_ = namedAs(s_, spinePath_[static_cast<size_t>(head)], {"head"});
  if (head < 0) {
    const double span = glm::length(crown - info_.pos(spinePath_[static_cast<size_t>(a)]));
    for (size_t i = static_cast<size_t>(a) + 1; i < spinePath_.size(); ++i) {
      if (nameKey(s_.jointNames[static_cast<size_t>(spinePath_[i])]).helper) continue;  // "_end", "Nub"
      if (glm::length(crown - info_.pos(spinePath_[i])) >= 0.25 * span) head = static_cast<int>(i);
    }
    if (head < 0 && static_cast<size_t>(a) + 1 < spinePath_.size()) head = a + 1;
  }
  if (head >= 0) map_[Slot::Head] = spinePath_[static_cast<size_t>(head)];
  // Chest and lower spine: the spine joints nearest 68 % and 27 % of the way from the hip
  // joints to the neck base — the xiphoid and navel levels of de Leva's trunk segments.
  if (a <= 0) return;
  const double minSeparation = 0.03 * height_;
  int neckBase = head >= 0 ? head : static_cast<int>(spinePath_.size()) - 1;
  for (int i = a + 1; i < neckBase; ++i) {
    if (glm::length(info_.pos(spinePath_[static_cast<size_t>(i)]) -
                    info_.pos(spinePath_[static_cast<size_t>(a)])) >= 0.5 * minSeparation) {
      neckBase = i;
      break;
    }
  }
  Vec3 hipLine = info_.pos(pelvis_);
  if (legs_.size() == 2 && legs_[0].upper >= 0 && legs_[1].upper >= 0) {
    hipLine = 0.5 * (info_.pos(legs_[0].path[static_cast<size_t>(legs_[0].upper)]) +
                     info_.pos(legs_[1].path[static_cast<size_t>(legs_[1].upper)]));
  }
  const double denom = info_.pos(spinePath_[static_cast<size_t>(neckBase)]).y - hipLine.y;
  const auto fraction = [&](int i) {
    return denom > 1e-9 ? (info_.pos(spinePath_[static_cast<size_t>(i)]).y - hipLine.y) / denom : 0.5;
  };
  const Vec3 pelvisPos = info_.pos(pelvis_);
  int chest = -1;
  double best = std::numeric_limits<double>::infinity();
  for (int i = 1; i <= a; ++i) {
    if (glm::length(info_.pos(spinePath_[static_cast<size_t>(i)]) - pelvisPos) < minSeparation) continue;
    const double d = std::abs(fraction(i) - 0.68);
    if (d < best) {
      best = d;
      chest = i;
    }
  }
  if (chest < 0) return;
  map_[Slot::Chest] = spinePath_[static_cast<size_t>(chest)];
  const Vec3 chestPos = info_.pos(map_[Slot::Chest]);
  int lower = -1;
  best = std::numeric_limits<double>::infinity();
  for (int i = 1; i < chest; ++i) {
    const Vec3 p = info_.pos(spinePath_[static_cast<size_t>(i)]);
    if (glm::length(p - pelvisPos) < minSeparation || glm::length(p - chestPos) < minSeparation) continue;
    const double d = std::abs(fraction(i) - 0.27);
    if (d < best) {
      best = d;
      lower = i;
    }
  }
  if (lower >= 0) map_[Slot::LowerSpine] = spinePath_[static_cast<size_t>(lower)];
}

std::string Mapper::candidates() const {
  std::ostringstream out;
  out << "pelvis " << (pelvis_ >= 0 ? jointName(s_, pelvis_) + " (where legs and spine split)" : "not found");
  out << "; legs:";
  if (legs_.empty()) out << " none reaching the floor";
  for (const Chain& c : legs_)
    out << " [" << pathString(s_, c.path) << "] (" << (c.side == 'R' ? "right" : "left") << ")";
  out << "; arms:";
  if (arms_.empty()) out << " no long branch off the spine";
  for (const Chain& c : arms_)
    out << " [" << pathString(s_, c.path) << "] (" << (c.side == 'R' ? "right" : "left") << ")";
  out << "; spine: [" << pathString(s_, spinePath_) << "]";
  return out.str();
}

Result<HumanoidMap> Mapper::run(std::vector<Finding>* notes) {
  if (Status st = s_.validate(); !st) return Error{"skeleton: " + st.error()};
  const bool pelvisFound = findPelvis();
  if (pelvisFound) {
    map_[Slot::Pelvis] = pelvis_;
    findLegs();
    findArms();
    forward_ = computeForward();
    assignSides(legs_, true);
    assignSides(arms_, false);
    for (const Chain& leg : legs_) {
      const bool left = leg.side == 'L';
      const auto at = [&](int i) { return i >= 0 ? leg.path[static_cast<size_t>(i)] : -1; };
      if (leg.upper >= 0 && leg.lower >= 0) {
        map_[left ? Slot::UpperLegL : Slot::UpperLegR] = at(leg.upper);
        map_[left ? Slot::LowerLegL : Slot::LowerLegR] = at(leg.lower);
        map_[left ? Slot::FootL : Slot::FootR] = leg.end >= 0 ? at(leg.end) : detachedEnd(leg, kFootNames);
      }
      notes_.push_back(note(Finding::Severity::Info, "map_structure", left ? "leg_l" : "leg_r",
                            std::string(leg.byName ? "joints by name" : "joints by proportion") + " on [" +
                                pathString(s_, leg.path) + "]"));
    }
    for (const Chain& arm : arms_) {
      const bool left = arm.side == 'L';
      const auto at = [&](int i) { return i >= 0 ? arm.path[static_cast<size_t>(i)] : -1; };
      if (arm.upper >= 0 && arm.lower >= 0) {
        map_[left ? Slot::UpperArmL : Slot::UpperArmR] = at(arm.upper);
        map_[left ? Slot::LowerArmL : Slot::LowerArmR] = at(arm.lower);
        map_[left ? Slot::HandL : Slot::HandR] = arm.end >= 0 ? at(arm.end) : detachedHand(arm);
      }
      notes_.push_back(note(Finding::Severity::Info, "map_structure", left ? "arm_l" : "arm_r",
                            std::string(arm.byName ? "joints by name" : "joints by proportion") + " on [" +
                                pathString(s_, arm.path) + "]"));
    }
    findSpineAndHead();
    const auto decide = [&](Slot slot, MapSource source, double confidence) {
      if (map_[slot] >= 0) decisions_[static_cast<size_t>(slot)] = SlotDecision{source, confidence};
    };
    decide(Slot::Pelvis, pelvisByName_ ? MapSource::Name : MapSource::Structure, pelvisByName_ ? 0.9 : 0.7);
    decide(Slot::LowerSpine, MapSource::Structure, 0.7);
    decide(Slot::Chest, MapSource::Structure, 0.7);
    decide(Slot::Head, headByName_ ? MapSource::Name : MapSource::Structure, headByName_ ? 0.9 : 0.7);
    for (const std::vector<Chain>* chains : {&legs_, &arms_}) {
      const bool legs = chains == &legs_;
      for (const Chain& c : *chains) {
        const bool left = c.side == 'L';
        const Slot upper =
            legs ? (left ? Slot::UpperLegL : Slot::UpperLegR) : (left ? Slot::UpperArmL : Slot::UpperArmR);
        const Slot lower =
            legs ? (left ? Slot::LowerLegL : Slot::LowerLegR) : (left ? Slot::LowerArmL : Slot::LowerArmR);
        const Slot end = legs ? (left ? Slot::FootL : Slot::FootR) : (left ? Slot::HandL : Slot::HandR);
        decide(upper, c.byName ? MapSource::Name : MapSource::Structure, c.byName ? 0.9 : 0.6);
        decide(lower, c.byName ? MapSource::Name : MapSource::Structure, c.byName ? 0.9 : 0.6);
        if (map_[end] >= 0) {
          const bool named = namedAs(s_, map_[end], legs ? kFootNames : kHandNames);
          decide(end, named ? MapSource::Name : MapSource::Structure, named ? 0.9 : 0.6);
        }
      }
    }
  }
  if (notes) notes->insert(notes->end(), notes_.begin(), notes_.end());
  std::string missing;
  for (int i = 0; i < kSlotCount; ++i) {
    const auto slot = static_cast<Slot>(i);
    if (slotRequired(slot) && map_[slot] < 0)
      missing += (missing.empty() ? "" : ", ") + std::string(slotName(slot));
  }
  if (!missing.empty()) {
    return Error{"cannot map the skeleton to a humanoid: missing slots " + missing +
                 ". Candidates considered: " + candidates()};
  }
  return map_;
}

}  // namespace

Result<HumanoidMap> asset_detail::mapStructure(const Skeleton& skeleton, std::vector<Finding>* notes,
                                               std::array<SlotDecision, kSlotCount>* decisions) {
  Mapper mapper(skeleton);
  Result<HumanoidMap> map = mapper.run(notes);
  if (map && decisions) *decisions = mapper.decisions();
  return map;
}

}  // namespace handoff
