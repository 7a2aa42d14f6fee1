#!/usr/bin/env python3
"""Writes the level test files (tests/level/): a staircase level made by the project.

Run from anywhere: python3 tests/data/level/make_stairs.py (writes beside this script). The files
are committed; the script says exactly what they hold, so the tests' expected figures follow from
it:

- Node "Floor" (no transform), mesh "floor": a quad at y = 0, x and z in [-3, 3]: 2 triangles.
- Node "Pivot" (rotation +90 degrees about +Y) with the child node "Stairs" (translation
  (0.5, 0, -1), scale (1, 0.5, 1)), mesh "stairs": 3 steps of rise 0.4 and run 0.3 in its own space
  along +X, 1 wide along +Z (a riser and a tread each: 12 triangles) and one degenerate triangle
  (a repeated vertex). In the level's space (x, y, z) -> rotY90(T + S p) = (z', y', -x'): the
  stairs span x in [-1, 0], y in [0, 0.6], z in [-1.4, -0.5] and climb towards -Z; the treads are
  at y = 0.2 (z in [-0.8, -0.5]), 0.4 (z in [-1.1, -0.8]) and 0.6 (z in [-1.4, -1.1]).
- An unnamed node (translation (2, 0, 0)), mesh "ramp" of two primitives: a TRIANGLE_STRIP of 4
  vertices (2 triangles) rising from y = 0 at z = 0 to y = 0.5 at z = 1, x in [0, 1], and a
  TRIANGLE_FAN of 5 vertices (3 triangles), a landing at y = 0.5 out to z = 2.5 (level x in [2, 3],
  z in [0, 2.5]).
- Node "Guide", mesh "guide": a LINES primitive only (skipped with a warning).
- Scene 0 (not the default) holds node "Hidden" with mesh "hidden" (a triangle at y = 10): the
  default scene is scene 1, so it is not read.

Variants: stairs.glb (the same as GLB), stairs_external.gltf + stairs_external.bin (the buffer as a
file beside it), stairs_missing_buffer.gltf (its buffer names a file that does not exist),
stairs_nonfinite.gltf (vertex 5 of mesh "stairs" is NaN).
"""
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts"))
from gltf_write import Builder, quad, write_gltf, write_glb  # noqa: E402


def stairs_geometry():
    rise, run, width = 0.4, 0.3, 1.0
    vertices, indices = [], []
    for i in range(3):
        x0, x1 = i * run, (i + 1) * run
        y0, y1 = i * rise, (i + 1) * rise
        quad(vertices, indices, (x0, y0, 0.0), (x0, y1, 0.0), (x0, y1, width), (x0, y0, width))  # riser
        quad(vertices, indices, (x0, y1, 0.0), (x1, y1, 0.0), (x1, y1, width), (x0, y1, width))  # tread
    indices.extend([0, 1, 1])  # degenerate: a repeated vertex
    return vertices, indices


def build(nonfinite=False):
    b = Builder("handoff tests/data/level/make_stairs.py")
    floor = b.mesh("floor", [(-3, 0, -3), (-3, 0, 3), (3, 0, 3), (3, 0, -3)], [0, 1, 2, 0, 2, 3])
    vertices, indices = stairs_geometry()
    if nonfinite:
        vertices[5] = (float("nan"), vertices[5][1], vertices[5][2])
    stairs = b.mesh("stairs", vertices, indices)
    ramp = b.mesh("ramp", [(0, 0, 0), (1, 0, 0), (0, 0.5, 1), (1, 0.5, 1)], None, mode=5)
    # A second primitive: a TRIANGLE_FAN landing of 5 vertices (3 triangles) beyond the ramp's top.
    b.doc["meshes"][ramp]["primitives"].append(
        b.primitive([(0, 0.5, 1), (1, 0.5, 1), (1, 0.5, 2), (0.5, 0.5, 2.5), (0, 0.5, 2)], None, mode=6))
    guide = b.mesh("guide", [(0, 0, 0), (0, 1, 0)], None, mode=1)
    hidden = b.mesh("hidden", [(0, 10, 0), (1, 10, 0), (0, 10, 1)], None)
    n_floor = b.node(name="Floor", mesh=floor)
    n_stairs = b.node(name="Stairs", mesh=stairs, translation=[0.5, 0, -1], scale=[1, 0.5, 1])
    s = math.sqrt(0.5)
    n_pivot = b.node(name="Pivot", rotation=[0, s, 0, s], children=[n_stairs])
    n_ramp = b.node(mesh=ramp, translation=[2, 0, 0])
    n_guide = b.node(name="Guide", mesh=guide)
    n_hidden = b.node(name="Hidden", mesh=hidden)
    b.doc["scenes"] = [{"nodes": [n_hidden]}, {"nodes": [n_floor, n_pivot, n_ramp, n_guide]}]
    b.doc["scene"] = 1
    return b.finish()


def main():
    doc, data = build()
    here = lambda name: os.path.join(HERE, name)  # noqa: E731
    write_gltf(here("stairs.gltf"), doc, data)
    write_glb(here("stairs.glb"), doc, data)
    write_gltf(here("stairs_external.gltf"), doc, data, uri="stairs_external.bin")
    with open(os.path.join(HERE, "stairs_external.bin"), "wb") as f:
        f.write(data)
    write_gltf(here("stairs_missing_buffer.gltf"), doc, data, uri="no_such_buffer.bin")
    doc, data = build(nonfinite=True)
    write_gltf(here("stairs_nonfinite.gltf"), doc, data)


if __name__ == "__main__":
    main()
