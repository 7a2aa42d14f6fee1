// Shape distances (GJK on the inner cores), name tokens and skeleton queries for the asset module.
#include "asset_internal.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

namespace handoff::asset_detail {
namespace {

// --- Support mapping of the inner core of a shape (the part the radius inflates) ---

Vec3 coreSupport(const PlacedShape& s, const Vec3& directionSpace) {
  const Vec3 d = glm::conjugate(s.spaceFromBody.rotation) * directionSpace;
  Vec3 local{0.0};
  switch (s.shape.type) {
    case ShapeType::Capsule:
      local = Vec3{0.0, d.y >= 0.0 ? s.shape.halfHeight : -s.shape.halfHeight, 0.0};
      break;
    case ShapeType::Box:
      local = Vec3{d.x >= 0.0 ? s.shape.halfExtents.x : -s.shape.halfExtents.x,
                   d.y >= 0.0 ? s.shape.halfExtents.y : -s.shape.halfExtents.y,
                   d.z >= 0.0 ? s.shape.halfExtents.z : -s.shape.halfExtents.z};
      break;
    case ShapeType::Sphere:
    case ShapeType::None:
      break;
  }
  return s.spaceFromBody.transformPoint(local);
}

// Closest point to the origin of the affine hull of `points` (k <= 4) with its barycentric
// weights; false when the points are affinely dependent.
bool affineProjection(const std::array<Vec3, 4>& points, int k, Vec3* closest,
                      std::array<double, 4>* weights) {
  const Vec3& p0 = points[0];
  if (k == 1) {
    *closest = p0;
    (*weights)[0] = 1.0;
    return true;
  }
  // Minimise |p0 + sum mu_i e_i|: (E^T E) mu = -E^T p0.
  const int m = k - 1;
  double a[3][3] = {};
  double b[3] = {};
  Vec3 e[3];
  for (int i = 0; i < m; ++i) e[i] = points[static_cast<size_t>(i + 1)] - p0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) a[i][j] = glm::dot(e[i], e[j]);
    b[i] = -glm::dot(e[i], p0);
  }
  double mu[3] = {};
  if (m == 1) {
    if (a[0][0] < 1e-30) return false;
    mu[0] = b[0] / a[0][0];
  } else if (m == 2) {
    const double det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    const double scale = a[0][0] * a[1][1];
    if (std::abs(det) <= 1e-12 * scale || scale < 1e-60) return false;
    mu[0] = (b[0] * a[1][1] - a[0][1] * b[1]) / det;
    mu[1] = (a[0][0] * b[1] - b[0] * a[1][0]) / det;
  } else {
    const glm::dmat3 mat(a[0][0], a[1][0], a[2][0], a[0][1], a[1][1], a[2][1], a[0][2], a[1][2], a[2][2]);
    const double det = glm::determinant(mat);
    const double scale = a[0][0] * a[1][1] * a[2][2];
    if (std::abs(det) <= 1e-12 * scale || scale < 1e-90) return false;
    const glm::dvec3 sol = glm::inverse(mat) * glm::dvec3(b[0], b[1], b[2]);
    mu[0] = sol.x;
    mu[1] = sol.y;
    mu[2] = sol.z;
  }
  Vec3 c = p0;
  double sum = 0.0;
  for (int i = 0; i < m; ++i) {
    c += mu[i] * e[i];
    (*weights)[static_cast<size_t>(i + 1)] = mu[i];
    sum += mu[i];
  }
  (*weights)[0] = 1.0 - sum;
  *closest = c;
  return true;
}

// Closest point of the simplex (convex hull of `simplex`) to the origin; reduces the simplex to
// the smallest face that contains it. Brute force over the (at most 15) faces.
Vec3 closestOnSimplex(std::array<Vec3, 4>& simplex, int& count, bool* containsOrigin) {
  double best = std::numeric_limits<double>::infinity();
  Vec3 bestPoint{0.0};
  int bestMask = 1;
  *containsOrigin = false;
  for (int mask = 1; mask < (1 << count); ++mask) {
    std::array<Vec3, 4> pts{};
    int k = 0;
    for (int i = 0; i < count; ++i) {
      if (mask & (1 << i)) pts[static_cast<size_t>(k++)] = simplex[static_cast<size_t>(i)];
    }
    Vec3 c;
    std::array<double, 4> w{};
    if (!affineProjection(pts, k, &c, &w)) continue;
    bool inside = true;
    for (int i = 0; i < k; ++i) inside = inside && w[static_cast<size_t>(i)] > -1e-12;
    if (!inside) continue;
    const double d = glm::dot(c, c);
    if (d < best) {
      best = d;
      bestPoint = c;
      bestMask = mask;
      if (k == 4) *containsOrigin = true;
    }
  }
  std::array<Vec3, 4> reduced{};
  int k = 0;
  for (int i = 0; i < count; ++i) {
    if (bestMask & (1 << i)) reduced[static_cast<size_t>(k++)] = simplex[static_cast<size_t>(i)];
  }
  simplex = reduced;
  count = k;
  return bestPoint;
}

bool isUpper(char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; }
bool isLower(char c) { return std::islower(static_cast<unsigned char>(c)) != 0; }
bool isDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool isAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

}  // namespace

double roundingRadius(const ShapeDesc& shape) {
  return shape.type == ShapeType::Capsule || shape.type == ShapeType::Sphere ? shape.radius : 0.0;
}

double coreDistance(const PlacedShape& a, const PlacedShape& b) {
  // GJK distance between the cores: the origin's distance to the Minkowski difference A - B.
  const auto support = [&](const Vec3& d) { return coreSupport(a, d) - coreSupport(b, -d); };
  Vec3 v = a.spaceFromBody.translation - b.spaceFromBody.translation;
  if (glm::dot(v, v) < 1e-24) v = Vec3{1.0, 0.0, 0.0};
  v = support(-v);
  std::array<Vec3, 4> simplex{};
  int count = 0;
  for (int iteration = 0; iteration < 64; ++iteration) {
    const double vv = glm::dot(v, v);
    if (vv < 1e-24) return 0.0;
    const Vec3 w = support(-v);
    if (vv - glm::dot(v, w) <= 1e-12 * vv) break;  // no progress: v is the closest point
    bool duplicate = false;
    for (int i = 0; i < count; ++i) {
      duplicate = duplicate ||
                  glm::dot(simplex[static_cast<size_t>(i)] - w, simplex[static_cast<size_t>(i)] - w) < 1e-24;
    }
    if (duplicate) break;
    simplex[static_cast<size_t>(count++)] = w;
    bool containsOrigin = false;
    v = closestOnSimplex(simplex, count, &containsOrigin);
    if (containsOrigin || count == 4) return 0.0;
  }
  return glm::length(v);
}

double corePenetration(const PlacedShape& a, const PlacedShape& b) {
  // Separating-axis test over the cores' face normals and edge-edge cross products: for convex
  // polytopes (a box, a segment, a point) the smallest interval overlap over these axes is the
  // penetration depth (the shortest translation that separates them).
  std::array<Vec3, 16> axes{};  // 3 + 3 face normals, 9 edge-edge products, the centre line
  int count = 0;
  std::array<Vec3, 3> edgesA{};
  std::array<Vec3, 3> edgesB{};
  int na = 0;
  int nb = 0;
  const auto collect = [&](const PlacedShape& s, std::array<Vec3, 3>& edges, int& n) {
    if (s.shape.type == ShapeType::Box) {
      for (int i = 0; i < 3; ++i) {
        Vec3 e{0.0};
        e[i] = 1.0;
        edges[static_cast<size_t>(n++)] = s.spaceFromBody.transformVector(e);
        axes[static_cast<size_t>(count++)] = edges[static_cast<size_t>(n - 1)];  // face normals
      }
    } else if (s.shape.type == ShapeType::Capsule && s.shape.halfHeight > 0.0) {
      edges[static_cast<size_t>(n++)] = s.spaceFromBody.transformVector(Vec3{0.0, 1.0, 0.0});
    }
  };
  collect(a, edgesA, na);
  collect(b, edgesB, nb);
  for (int i = 0; i < na; ++i) {
    for (int j = 0; j < nb; ++j) {
      const Vec3 c = glm::cross(edgesA[static_cast<size_t>(i)], edgesB[static_cast<size_t>(j)]);
      if (glm::length(c) > 1e-9) axes[static_cast<size_t>(count++)] = glm::normalize(c);
    }
  }
  const Vec3 centres = b.spaceFromBody.translation - a.spaceFromBody.translation;
  if (glm::length(centres) > 1e-12) axes[static_cast<size_t>(count++)] = glm::normalize(centres);
  double depth = std::numeric_limits<double>::infinity();
  for (int k = 0; k < count; ++k) {
    const Vec3& n = axes[static_cast<size_t>(k)];
    const double maxA = glm::dot(coreSupport(a, n), n);
    const double minA = glm::dot(coreSupport(a, -n), n);
    const double maxB = glm::dot(coreSupport(b, n), n);
    const double minB = glm::dot(coreSupport(b, -n), n);
    depth = std::min(depth, std::min(maxA - minB, maxB - minA));
  }
  return std::isfinite(depth) ? std::max(depth, 0.0) : 0.0;
}

double surfaceDistance(const PlacedShape& a, const PlacedShape& b) {
  const double radii = roundingRadius(a.shape) + roundingRadius(b.shape);
  const double core = coreDistance(a, b);
  if (core > 0.0) return core - radii;
  return -(corePenetration(a, b) + radii);
}

NameKey nameKey(std::string_view name) {
  // Tokens: split at non-alphanumerics, lower->upper ("foreArm"), letter<->digit, and an upper
  // case run before a capitalised word ("LHip" -> "L", "Hip").
  std::vector<std::string> tokens;
  std::string current;
  const auto flush = [&] {
    if (!current.empty()) tokens.push_back(current);
    current.clear();
  };
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!isAlnum(c)) {
      flush();
      continue;
    }
    if (!current.empty()) {
      const char prev = name[i - 1];
      const bool next = i + 1 < name.size() && isLower(name[i + 1]);
      if ((isLower(prev) && isUpper(c)) || (isDigit(prev) != isDigit(c)) ||
          (isUpper(prev) && isUpper(c) && next)) {
        flush();
      }
    }
    current.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  flush();
  // A side marker inside the name with a word after it ends a character-name prefix: Unity's
  // "Character1_LeftArm" and "RobotLeftUpLeg" are "arm" and "upleg".
  for (size_t i = 1; i + 1 < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    const bool side = t == "l" || t == "r" || t == "left" || t == "right";
    const bool wordAfter = std::any_of(tokens.begin() + static_cast<std::ptrdiff_t>(i) + 1, tokens.end(),
                                       [](const std::string& w) { return !isDigit(w[0]); });
    const bool prefixIsName = std::none_of(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(i),
                                           [](const std::string& w) {
                                             return w == "mch" || w == "org" || w == "def" || w == "tweak";
                                           });
    if (side && wordAfter && prefixIsName) {
      tokens.erase(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  NameKey key;
  key.helper = !name.empty() && name[0] == '_';
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t == "mch" || t == "tweak" || t == "twist" || t == "share" || t == "sharebone" || t == "roll" ||
        t == "ik" || t == "pole" || t == "poletarget" || t == "target" || t == "ctrl" || t == "control" ||
        t == "helper" || t == "end" || t == "nub" || t == "sec" || t == "adj" || t == "fk" ||
        (t == "org" && i == 0) || (t == "pt" && i == 0)) {
      key.helper = true;
    }
    if (t == "l" || t == "left") {
      key.side = 'L';
    } else if (t == "r" || t == "right") {
      key.side = 'R';
    } else if (isDigit(t[0]) || t == "def" || t == "mixamorig" || t == "bip" || t == "org" ||
               t == "armature" || t == "bn" || t == "jnt" || (i + 1 < tokens.size() && (t == "j" || t == "cc")) ||
               (t == "c" && i + 1 < tokens.size()) || (t == "base" && i == 1 && tokens[0] == "cc")) {
      continue;
    } else {
      key.core += t;
      key.tokens.push_back(t);
    }
  }
  return key;
}

bool nameIs(const NameKey& key, std::string_view name) {
  // One-word generic names match the whole name only: "LowerArm" is no "arm", "UpLeg" no "leg".
  if (name == "arm" || name == "leg" || name == "hip") return key.core == name;
  std::string suffix;
  for (size_t i = key.tokens.size(); i-- > 0;) {
    suffix = key.tokens[i] + suffix;
    if (suffix == name) return true;
    if (suffix.size() >= name.size()) return false;
  }
  return false;
}

Vec3 perpendicularTo(const Vec3& v, const Vec3& axis, const Vec3& fallback) {
  const Vec3 p = v - glm::dot(v, axis) * axis;
  const double len = glm::length(p);
  if (len < 1e-6 || !std::isfinite(len)) {
    const Vec3 f = fallback - glm::dot(fallback, axis) * axis;
    const double lf = glm::length(f);
    if (lf < 1e-6) {
      // Any perpendicular.
      const Vec3 other = std::abs(axis.x) < 0.9 ? Vec3{1.0, 0.0, 0.0} : Vec3{0.0, 0.0, 1.0};
      return glm::normalize(glm::cross(axis, other));
    }
    return f / lf;
  }
  return p / len;
}

Quat rotationFromAxes(const Vec3& x, const Vec3& y, const Vec3& z) {
  return normalizeOrIdentity(glm::quat_cast(glm::dmat3(x, y, z)));
}

Vec3 directionOr(const Vec3& a, const Vec3& b, const Vec3& fallback) {
  const Vec3 d = b - a;
  const double len = glm::length(d);
  return len > 1e-6 ? d / len : fallback;
}

SkeletonInfo::SkeletonInfo(const Skeleton& s) : skeleton(&s) {
  const size_t n = static_cast<size_t>(s.jointCount());
  models.resize(n);
  localToModel(s, s.restLocal, models);
  children.resize(n);
  tip.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (s.parents[i] != kNoParent) children[static_cast<size_t>(s.parents[i])].push_back(static_cast<int>(i));
  }
  floorY = std::numeric_limits<double>::infinity();
  topY = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < n; ++i) {
    if (i < s.endSiteOffset.size() && glm::length(s.endSiteOffset[i]) > 1e-9) {
      tip[i] = models[i].transformPoint(s.endSiteOffset[i]);
    }
    floorY = std::min(floorY, models[i].translation.y);
    topY = std::max(topY, models[i].translation.y);
    if (tip[i]) {
      floorY = std::min(floorY, tip[i]->y);
      topY = std::max(topY, tip[i]->y);
    }
  }
}

bool SkeletonInfo::isAncestor(int ancestor, int joint) const {
  for (int j = joint; j != kNoParent; j = skeleton->parents[static_cast<size_t>(j)]) {
    if (j == ancestor) return true;
  }
  return false;
}

int SkeletonInfo::lca(int a, int b) const {
  for (int j = a; j != kNoParent; j = skeleton->parents[static_cast<size_t>(j)]) {
    if (isAncestor(j, b)) return j;
  }
  return kNoParent;
}

std::vector<Vec3> SkeletonInfo::subtreePoints(int joint) const {
  std::vector<Vec3> points;
  for (int j = joint; j < skeleton->jointCount(); ++j) {
    if (!isAncestor(joint, j)) continue;
    points.push_back(pos(j));
    if (tip[static_cast<size_t>(j)]) points.push_back(*tip[static_cast<size_t>(j)]);
  }
  return points;
}

SkeletonInfo::FarPoint SkeletonInfo::farthestInSubtree(int joint, const Vec3& from) const {
  FarPoint best;
  best.point = pos(joint);
  best.joint = joint;
  best.distance = glm::length(best.point - from);
  for (int j = joint; j < skeleton->jointCount(); ++j) {
    if (!isAncestor(joint, j)) continue;
    const auto consider = [&](const Vec3& p) {
      const double d = glm::length(p - from);
      if (d > best.distance + 1e-12) best = FarPoint{p, j, d};
    };
    consider(pos(j));
    if (tip[static_cast<size_t>(j)]) consider(*tip[static_cast<size_t>(j)]);
  }
  return best;
}

std::vector<int> SkeletonInfo::path(int ancestor, int descendant) const {
  std::vector<int> result;
  for (int j = descendant; j != kNoParent; j = skeleton->parents[static_cast<size_t>(j)]) {
    result.push_back(j);
    if (j == ancestor) break;
  }
  std::reverse(result.begin(), result.end());
  return result;
}

}  // namespace handoff::asset_detail
