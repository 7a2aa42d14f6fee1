// The one translation unit holding tinygltf's implementation (compiled with -w: third-party).
#define TINYGLTF_IMPLEMENTATION
#include "replay/gltf.h"
