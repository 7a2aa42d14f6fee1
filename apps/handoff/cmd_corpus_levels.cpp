// The levels of `handoff corpus` (cmd_corpus.cpp): every row of levels.tsv (file, what it
// contains, units, up axis) loaded with loadLevel and held against what the row states. The
// description is prose written from the file itself; the figures it states are read from it:
//   "<N> triangles"                    the level's triangle count, exactly;
//   "<N> named meshes" / "one mesh"    the mesh count, exactly;
//   `mesh "Name"`, "named meshes: A, B (remark), ..." (capitalised single words) meshes present;
//   "<A> x <B> x <C> m"                the three extents, sorted, within 5 %;
//   "<A> x <B> m"                      the two horizontal extents (X, Z), sorted, within 5 %;
//   "up to <H> m"                      the top (bounds max Y) within 5 %.
// Units "metres": the level's horizontal size is between 1 m and 10 km. Up axis "Y": more of the
// surface faces Y than X or Z (floors, treads and ramps face up in a Y-up level).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "handoff/level.h"

namespace handoff::cli {
namespace {

/// Extents stated in the text and measured agree within this fraction.
constexpr double kExtentTolerance = 0.05;

std::string trim(std::string s) {
  const size_t a = s.find_first_not_of(" \t");
  const size_t b = s.find_last_not_of(" \t.");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

/// Mesh names the description states.
std::vector<std::string> statedNames(const std::string& text) {
  std::vector<std::string> names;
  const std::regex quoted(R"(mesh\s+\"([^\"]+)\")");
  for (std::sregex_iterator it(text.begin(), text.end(), quoted), end; it != end; ++it)
    names.push_back((*it)[1]);
  const size_t list = text.find("named meshes:");
  if (list != std::string::npos) {
    std::string items = text.substr(list + 13);
    items = std::regex_replace(items, std::regex(R"(\([^)]*\))"), "");
    // The list ends at a sentence's end ('.' before a space: "Trip0.5X4" is a name) or a ';'.
    const size_t stop = std::min(items.find(". "), items.find(';'));
    std::istringstream in(items.substr(0, stop));
    std::string item;
    while (std::getline(in, item, ',')) {
      item = trim(item);
      if (!item.empty() && item.find(' ') == std::string::npos &&
          std::isupper(static_cast<unsigned char>(item[0])))
        names.push_back(item);
    }
  }
  return names;
}

bool near(double measured, double stated) { return std::abs(measured - stated) <= kExtentTolerance * stated; }

std::string fmt(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", v);
  return buffer;
}

}  // namespace

nlohmann::ordered_json runCorpusLevels(const std::filesystem::path& dir,
                                       const std::vector<std::vector<std::string>>& rows, std::FILE* progress,
                                       bool text, int& right) {
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  right = 0;
  if (text) std::printf("levels (%zu):\n", rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string& file = rows[i][0];
    const std::string& description = rows[i][1];
    const std::string& units = rows[i][2];
    const std::string& up = rows[i][3];
    std::vector<std::string> problems;
    nlohmann::ordered_json row;
    row["file"] = file;
    Result<Level> level = loadLevel((dir / file).string());
    if (!level) {
      problems.push_back(level.error());
    } else {
      const LevelFigures f = levelFigures(*level);
      std::smatch m;
      if (std::regex_search(description, m, std::regex(R"((\d+) triangles)")) &&
          std::stoul(m[1]) != f.triangles) {
        problems.push_back(std::to_string(f.triangles) + " triangles, levels.tsv states " + m[1].str());
      }
      size_t meshes = 0;
      if (std::regex_search(description, m, std::regex(R"((\d+) named meshes)"))) meshes = std::stoul(m[1]);
      if (description.find("one mesh") != std::string::npos) meshes = 1;
      if (meshes > 0 && meshes != f.meshes)
        problems.push_back(std::to_string(f.meshes) + " meshes, levels.tsv states " + std::to_string(meshes));
      for (const std::string& name : statedNames(description)) {
        const bool found = std::any_of(level->meshes.begin(), level->meshes.end(),
                                       [&](const LevelMesh& mesh) { return mesh.name == name; });
        if (!found) problems.push_back("no mesh named '" + name + "'");
      }
      const std::string number = R"((\d+(?:\.\d+)?))";
      if (std::regex_search(description, m, std::regex(number + " x " + number + " x " + number + " m"))) {
        std::vector<double> stated{std::stod(m[1]), std::stod(m[2]), std::stod(m[3])};
        std::vector<double> measured{f.extent.x, f.extent.y, f.extent.z};
        std::sort(stated.begin(), stated.end());
        std::sort(measured.begin(), measured.end());
        for (size_t k = 0; k < 3; ++k) {
          if (!near(measured[k], stated[k]))
            problems.push_back("extent " + fmt(measured[k]) + " m, levels.tsv states " + fmt(stated[k]) +
                               " m");
        }
      } else if (std::regex_search(description, m, std::regex(number + " x " + number + " m"))) {
        std::vector<double> stated{std::stod(m[1]), std::stod(m[2])};
        std::vector<double> measured{f.extent.x, f.extent.z};
        std::sort(stated.begin(), stated.end());
        std::sort(measured.begin(), measured.end());
        for (size_t k = 0; k < 2; ++k) {
          if (!near(measured[k], stated[k]))
            problems.push_back("horizontal extent " + fmt(measured[k]) + " m, levels.tsv states " +
                               fmt(stated[k]) + " m");
        }
      }
      if (std::regex_search(description, m, std::regex("up to " + number + " m")) &&
          !near(level->boundsMax.y, std::stod(m[1]))) {
        problems.push_back("top at " + fmt(level->boundsMax.y) + " m, levels.tsv states up to " + m[1].str() +
                           " m");
      }
      const double horizontal = std::max(f.extent.x, f.extent.z);
      if (units == "metres" && !(horizontal >= 1.0 && horizontal <= 10000.0))
        problems.push_back("horizontal size " + fmt(horizontal) + " m is not a level's in metres");
      if (up == "Y" && !(f.facing[1] > f.facing[0] && f.facing[1] > f.facing[2])) {
        problems.push_back("more surface faces X or Z than Y (" + fmt(f.facing[0]) + ", " + fmt(f.facing[1]) +
                           ", " + fmt(f.facing[2]) + " m^2): not Y up");
      }
      row["meshes"] = f.meshes;
      row["triangles"] = f.triangles;
      row["extent"] = {f.extent.x, f.extent.y, f.extent.z};
      row["facingY"] = f.facing[1] / f.totalFacing();
    }
    const bool ok = problems.empty();
    right += ok ? 1 : 0;
    row["right"] = ok;
    row["problems"] = problems;
    std::string detail;
    for (const std::string& p : problems) detail += (detail.empty() ? "" : "; ") + p;
    if (level) {
      const LevelFigures f = levelFigures(*level);
      std::fprintf(
          progress,
          "[%zu/%zu] %-36s %-5s %3zu meshes %7zu triangles %8.2f x %6.2f x %8.2f m, %3.0f %% facing Y%s%s\n",
          i + 1, rows.size(), file.c_str(), ok ? "OK" : "WRONG", f.meshes, f.triangles, f.extent.x,
          f.extent.y, f.extent.z, 100.0 * f.facing[1] / f.totalFacing(), ok ? "" : "  ", detail.c_str());
    } else {
      std::fprintf(progress, "[%zu/%zu] %-36s FAILED %s\n", i + 1, rows.size(), file.c_str(), detail.c_str());
    }
    std::fflush(progress);
    files.push_back(std::move(row));
  }
  if (text) std::printf("levels right: %d of %zu\n", right, rows.size());
  return {{"right", right}, {"count", rows.size()}, {"files", files}};
}

}  // namespace handoff::cli
