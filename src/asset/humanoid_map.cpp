// Humanoid mapping: structure finds the chains, names (or proportions) pick the joints in them.
#include "asset_internal.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace handoff {
using namespace asset_detail;

namespace {

// Name cores per slot, most specific first (see nameKey: side tokens and rig prefixes removed).
// "shoulder" is the upper arm in BVH rigs (Boxing, DeepMimic) but the clavicle in Mixamo/CMU,
// where "arm" comes first on the chain and wins because it is tried first.
const std::vector<std::string> kUpperArmNames = {"upperarm", "arm", "uparm", "humerus", "shoulder"};
const std::vector<std::string> kLowerArmNames = {"forearm", "lowerarm", "elbow", "lowarm"};
const std::vector<std::string> kHandNames = {"hand", "wrist"};
const std::vector<std::string> kUpperLegNames = {"upperleg", "upleg", "thigh", "hip", "femur"};
const std::vector<std::string> kLowerLegNames = {"lowerleg", "leg", "shin", "calf", "knee", "lowleg"};
const std::vector<std::string> kFootNames = {"foot", "ankle"};

// Proportions (Drillis & Contini 1966, segment lengths / stature): thigh 0.245, upper arm 0.186,
// forearm 0.146, hand 0.108 — expressed relative to the thigh, the bone the legs give us.
constexpr double kUpperArmPerThigh = 0.76;
constexpr double kForearmPerThigh = 0.60;
constexpr double kHandPerThigh = 0.44;

int firstByNames(const Skeleton& s, const std::vector<int>& path, const std::vector<std::string>& names,
                 size_t from = 0) {
  for (const std::string& name : names) {
    for (size_t i = from; i < path.size(); ++i) {
      if (nameKey(s.jointNames[static_cast<size_t>(path[i])]).core == name) return static_cast<int>(i);
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

 private:
  bool findPelvis();
  void findLegs();
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
  int pelvis_ = -1;  // Where legs and spine split.
  double hipHeight_ = 0.0;
  double height_ = 0.0;
  std::vector<int> spinePath_;  // pelvis ... crown leaf
  std::vector<Chain> legs_, arms_;
  Vec3 forward_{0.0, 0.0, 1.0};
  int armBranch_ = -1;
};

bool Mapper::findPelvis() {
  const int n = s_.jointCount();
  height_ = info_.topY - info_.floorY;
  if (!(height_ > 0.0)) return false;
  // The crown: the highest leaf point.
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
  // The pelvis: the common ancestor of the crown and the lowest leaf whose split lies well above
  // the floor (IK and root bones at floor level split at the floor and are skipped).
  std::sort(leaves.begin(), leaves.end());
  for (const auto& [y, leaf] : leaves) {
    const int p = info_.lca(leaf, crown_);
    if (p < 0 || p == crown_ || p == leaf) continue;
    if (info_.pos(p).y - info_.floorY >= 0.25 * height_) {
      pelvis_ = p;
      break;
    }
  }
  if (pelvis_ < 0) return false;
  hipHeight_ = info_.pos(pelvis_).y - info_.floorY;
  spinePath_ = info_.path(pelvis_, crown_);
  return true;
}

void Mapper::findLegs() {
  // Children of the pelvis (other than the spine) whose subtree reaches the floor.
  std::vector<std::pair<double, int>> candidates;
  for (int c : info_.children[static_cast<size_t>(pelvis_)]) {
    if (spinePath_.size() > 1 && c == spinePath_[1]) continue;
    double low = std::numeric_limits<double>::infinity();
    for (const Vec3& p : info_.subtreePoints(c)) low = std::min(low, p.y);
    if (low - info_.floorY <= 0.15 * hipHeight_) candidates.emplace_back(low, c);
  }
  std::sort(candidates.begin(), candidates.end());
  for (size_t i = 0; i < candidates.size() && i < 2; ++i) {
    Chain leg;
    leg.branch = pelvis_;
    leg.root = candidates[i].second;
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

void Mapper::findArms() {
  // Long branches off the spine path (excluding the pelvis): the two with the largest reach.
  std::vector<std::pair<double, Chain>> candidates;
  for (size_t i = 1; i < spinePath_.size(); ++i) {
    const int s = spinePath_[i];
    for (int c : info_.children[static_cast<size_t>(s)]) {
      if (i + 1 < spinePath_.size() && c == spinePath_[i + 1]) continue;
      const auto far = info_.farthestInSubtree(c, info_.pos(s));
      if (far.distance < 0.3 * hipHeight_) continue;
      Chain arm;
      arm.branch = s;
      arm.root = c;
      arm.path = info_.path(c, far.joint);
      arm.endPoint = far.point;
      candidates.emplace_back(far.distance, std::move(arm));
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
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
  for (const Chain& c : chains) {
    if (c.nameSide != 0 && c.nameSide != c.side) {
      notes_.push_back(note(Finding::Severity::Warning, "map_side", jointName(s_, c.root),
                            std::string("named ") + (c.nameSide == 'L' ? "left" : "right") +
                                " but lies on the " + (c.side == 'L' ? "left" : "right") +
                                " of a character facing (" + std::to_string(forward_.x) + ", " +
                                std::to_string(forward_.z) + "); geometry wins"));
    }
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
    if (nameKey(s_.jointNames[static_cast<size_t>(spinePath_[i])]).core == "head") {
      head = static_cast<int>(i);
      break;
    }
  }
  if (head < 0) {
    const double span = glm::length(crown - info_.pos(spinePath_[static_cast<size_t>(a)]));
    for (size_t i = static_cast<size_t>(a) + 1; i < spinePath_.size(); ++i) {
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
        map_[left ? Slot::FootL : Slot::FootR] = at(leg.end);
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
        map_[left ? Slot::HandL : Slot::HandR] = at(arm.end);
      }
      notes_.push_back(note(Finding::Severity::Info, "map_structure", left ? "arm_l" : "arm_r",
                            std::string(arm.byName ? "joints by name" : "joints by proportion") + " on [" +
                                pathString(s_, arm.path) + "]"));
    }
    findSpineAndHead();
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

Result<HumanoidMap> mapHumanoid(const Skeleton& skeleton, std::vector<Finding>* notes) {
  return Mapper(skeleton).run(notes);
}

Result<HumanoidMap> mapHumanoidFromJson(const Skeleton& skeleton, const std::string& json,
                                        const std::string& sourceName) {
  if (Status st = skeleton.validate(); !st) return Error{"skeleton: " + st.error()};
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json);
  } catch (const nlohmann::json::parse_error& e) {
    return Error{sourceName + ": JSON parse error at byte " + std::to_string(e.byte) + ": " + e.what()};
  }
  if (!doc.is_object()) return Error{sourceName + ": a humanoid map is a JSON object {\"slot\": \"bone\"}"};
  std::array<std::optional<int>, kSlotCount> explicitJoint;  // nullopt: not listed; -1: unmapped
  std::string errors;
  const auto fail = [&](const std::string& e) { errors += (errors.empty() ? "" : "; ") + e; };
  for (const auto& [key, value] : doc.items()) {
    const std::optional<Slot> slot = slotFromName(key);
    if (!slot) {
      fail("unknown slot '" + key + "'");
      continue;
    }
    if (value.is_null()) {
      if (slotRequired(*slot)) {
        fail("slot '" + key + "' is required and cannot be null");
      } else {
        explicitJoint[static_cast<size_t>(*slot)] = -1;
      }
      continue;
    }
    if (!value.is_string()) {
      fail("slot '" + key + "': expected a bone name (string) or null");
      continue;
    }
    const int j = skeleton.findJoint(value.get<std::string>());
    if (j < 0) {
      fail("slot '" + key + "': the skeleton has no bone '" + value.get<std::string>() + "'");
      continue;
    }
    explicitJoint[static_cast<size_t>(*slot)] = j;
  }
  if (!errors.empty()) return Error{sourceName + ": " + errors};
  Result<HumanoidMap> automatic = mapHumanoid(skeleton);
  HumanoidMap map = automatic ? *automatic : HumanoidMap{};
  for (int i = 0; i < kSlotCount; ++i) {
    if (explicitJoint[static_cast<size_t>(i)])
      map.joint[static_cast<size_t>(i)] = *explicitJoint[static_cast<size_t>(i)];
  }
  // Hierarchy: each mapped slot's joint must descend from the nearest mapped ancestor slot's
  // joint. Automatic entries that contradict explicit ones are dropped (optional) or reported.
  SkeletonInfo info(skeleton);
  for (int i = 0; i < kSlotCount; ++i) {
    const auto slot = static_cast<Slot>(i);
    if (map[slot] < 0) continue;
    Slot up = parentSlot(slot);
    while (up != Slot::Count && map[up] < 0) up = parentSlot(up);
    if (up == Slot::Count) continue;
    if (map[up] == map[slot] || !info.isAncestor(map[up], map[slot])) {
      const bool slotExplicit = explicitJoint[static_cast<size_t>(i)].has_value();
      if (!slotExplicit && !slotRequired(slot)) {
        map[slot] = -1;
        continue;
      }
      fail(std::string(slotName(slot)) + " '" + skeleton.jointNames[static_cast<size_t>(map[slot])] +
           "' is not below " + slotName(up) + " '" + skeleton.jointNames[static_cast<size_t>(map[up])] + "'");
    }
  }
  std::string missing;
  for (int i = 0; i < kSlotCount; ++i) {
    const auto slot = static_cast<Slot>(i);
    if (slotRequired(slot) && map[slot] < 0)
      missing += (missing.empty() ? "" : ", ") + std::string(slotName(slot));
  }
  if (!missing.empty()) {
    fail("missing slots " + missing +
         (automatic ? "" : " (automatic mapping failed: " + automatic.error() + ")"));
  }
  if (!errors.empty()) return Error{sourceName + ": " + errors};
  return map;
}

}  // namespace handoff
