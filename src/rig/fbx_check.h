// Check of FBX bytes before Assimp reads them (private to the rig module).
//
// Binary FBX: the header and version, and every node record (its end offset inside its parent and
// past its own properties, its property list's length, each property's type and size, array
// lengths and their compressed sizes) so that Assimp 5.2 reads no record or array past its end and
// allocates no more than the file can hold. ASCII FBX: the version line and balanced, bounded
// braces. Errors name the byte offset (binary) or line (ASCII).
#pragma once

#include "handoff/result.h"

#include <string>
#include <string_view>

namespace handoff::detail {

Status checkFbx(std::string_view data, const std::string& source);

}  // namespace handoff::detail
