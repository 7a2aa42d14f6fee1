#!/usr/bin/env python3
"""Writes data/levels/stairs.gltf: the project's own staircase level (scenarios/stairs_mesh.json).

Run from anywhere: python3 data/levels/make_stairs.py (writes beside this script). The file is
committed; this script says exactly what it holds, so tests can check against the geometry.

Level space: metres, Y up (glTF). One node "Stairs", one mesh "stairs", a closed solid without
its bottom face (it stands on the ground at y = 0):

- 8 steps of rise 0.18 m and run 0.3 m climbing towards -Z: step i (0-based) has its tread at
  y = (i + 1) * 0.18 over z in [-(i + 1) * 0.3, -i * 0.3]; the foot of the flight is the line
  z = 0, y = 0.
- A landing at the top: y = 1.44 over z in [-3.9, -2.4] (1.5 m deep).
- 1.5 m wide: x in [-0.75, 0.75]. Risers face +Z, the landing's back wall faces -Z, the two side
  walls face -X and +X.

Every face is two triangles, wound counter-clockwise seen from outside.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
from gltf_write import Builder, quad, write_gltf  # noqa: E402

STEPS, RISE, RUN, WIDTH, LANDING = 8, 0.18, 0.3, 1.5, 1.5


def geometry():
    vertices, indices = [], []
    x0, x1 = -WIDTH / 2, WIDTH / 2
    top = STEPS * RISE
    back = -(STEPS * RUN + LANDING)
    # Columns from the foot to the back: (z_front, z_back, height).
    columns = [(-i * RUN, -(i + 1) * RUN, (i + 1) * RISE) for i in range(STEPS)]
    columns.append((-STEPS * RUN, back, top))
    below = 0.0
    for zf, zb, y in columns:
        quad(vertices, indices, (x0, below, zf), (x1, below, zf), (x1, y, zf), (x0, y, zf))  # riser, facing +Z
        quad(vertices, indices, (x0, y, zf), (x1, y, zf), (x1, y, zb), (x0, y, zb))  # tread, facing +Y
        quad(vertices, indices, (x1, 0.0, zf), (x1, 0.0, zb), (x1, y, zb), (x1, y, zf))  # side, facing +X
        quad(vertices, indices, (x0, 0.0, zb), (x0, 0.0, zf), (x0, y, zf), (x0, y, zb))  # side, facing -X
        below = y
    # back wall, facing -Z
    quad(vertices, indices, (x1, 0.0, back), (x0, 0.0, back), (x0, top, back), (x1, top, back))
    return vertices, indices


def main():
    b = Builder("handoff data/levels/make_stairs.py")
    stairs = b.mesh("stairs", *geometry())
    b.doc["scenes"] = [{"nodes": [b.node(name="Stairs", mesh=stairs)]}]
    b.doc["scene"] = 0
    doc, data = b.finish()
    write_gltf(os.path.join(HERE, "stairs.gltf"), doc, data)


if __name__ == "__main__":
    main()
