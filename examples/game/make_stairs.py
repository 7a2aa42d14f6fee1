#!/usr/bin/env python3
"""Writes stairs.glb, the example game's level: a 30 x 30 m floor of 1 m tiles (mesh "Floor", at
y = 0) and a staircase of seven 0.2 m steps (0.3 m deep, 3 m wide) from the floor up to a landing
1.4 m high and 3 m deep (mesh "Stairs", closed at the sides and the back), in metres, Y up (glTF's
convention). Deterministic: running it again gives the same bytes.

    python3 examples/game/make_stairs.py examples/game/stairs.glb
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from gltf_write import Builder, quad, write_glb  # noqa: E402

RISE, RUN, WIDTH, STEPS, LANDING = 0.2, 0.3, 3.0, 7, 3.0
FLOOR = 15.0  # half the floor's side [m]


def floor():
    """A grid of 1 m tiles, as a game's floor is modelled (no 30 m triangles)."""
    v, i = [], []
    n = int(2 * FLOOR)
    for a in range(n):
        for b in range(n):
            x0, z0 = -FLOOR + a, -FLOOR + b
            quad(v, i, (x0, 0, z0), (x0, 0, z0 + 1), (x0 + 1, 0, z0 + 1), (x0 + 1, 0, z0))
    return v, i


def stairs():
    v, i = [], []
    x0, x1 = -WIDTH / 2, WIDTH / 2
    z = 0.0
    for k in range(STEPS):
        depth = LANDING if k == STEPS - 1 else RUN
        y0, y1, z1 = k * RISE, (k + 1) * RISE, z + depth
        quad(v, i, (x0, y1, z), (x1, y1, z), (x1, y1, z1), (x0, y1, z1))  # tread, facing up
        quad(v, i, (x0, y0, z), (x1, y0, z), (x1, y1, z), (x0, y1, z))  # riser, facing -Z
        quad(v, i, (x0, 0, z), (x0, y1, z), (x0, y1, z1), (x0, 0, z1))  # left side, facing -X
        quad(v, i, (x1, 0, z1), (x1, y1, z1), (x1, y1, z), (x1, 0, z))  # right side, facing +X
        z = z1
    top = STEPS * RISE
    quad(v, i, (x1, 0, z), (x1, top, z), (x0, top, z), (x0, 0, z))  # back wall, facing +Z
    return v, i


def main(path):
    b = Builder("handoff examples/game/make_stairs.py")
    nodes = [b.node(name=name, mesh=b.mesh(name, *geometry())) for name, geometry in
             (("Floor", floor), ("Stairs", stairs))]
    b.doc["scenes"] = [{"nodes": nodes}]
    b.doc["scene"] = 0
    write_glb(path, *b.finish())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "stairs.glb")
