// Private: tinygltf (Debian libtinygltf-dev) as used by the replay module and its tests. The
// namespace is renamed so the copy compiled into handoff_replay never clashes with a game's own
// tinygltf; image decoding is left out (replays hold no textures).
#pragma once

#ifndef TINYGLTF_NO_STB_IMAGE
#define TINYGLTF_NO_STB_IMAGE
#endif
#ifndef TINYGLTF_NO_STB_IMAGE_WRITE
#define TINYGLTF_NO_STB_IMAGE_WRITE
#endif
#ifndef TINYGLTF_NO_EXTERNAL_IMAGE
#define TINYGLTF_NO_EXTERNAL_IMAGE
#endif
#define tinygltf handoff_tinygltf

#include <tiny_gltf.h>
