// Check of COLLADA bytes before Assimp reads them (private to the rig module).
//
// Assimp 5.2's COLLADA reader trusts the counts the file declares: a <vertex_weights> or
// <polylist> whose count disagrees with its <vcount>, or a word in a <p> index list, make it read
// out of bounds, loop or allocate without bound (found by tests/fuzz/import_fuzz.cpp).
// checkCollada() parses the XML (pugixml) and checks, naming the element, that every array holds
// the count of numbers it declares, that accessors, index lists and weights stay inside their
// sources, that a skin has a bind matrix per joint and an animation a value per key, and that
// transforms have their number of values.
#pragma once

#include "handoff/result.h"

#include <string>
#include <string_view>

namespace handoff::detail {

/// Errors: "<source>: <element path> (line N): <what is wrong>" or the XML parse error.
Status checkCollada(std::string_view data, const std::string& source);

}  // namespace handoff::detail
