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
import base64
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

STEPS, RISE, RUN, WIDTH, LANDING = 8, 0.18, 0.3, 1.5, 1.5


def geometry():
    vertices, indices = [], []

    def quad(a, b, c, d):
        """Two triangles a-b-c, a-c-d (counter-clockwise seen from the side the normal faces)."""
        base = len(vertices)
        vertices.extend([a, b, c, d])
        indices.extend([base, base + 1, base + 2, base, base + 2, base + 3])

    x0, x1 = -WIDTH / 2, WIDTH / 2
    top = STEPS * RISE
    back = -(STEPS * RUN + LANDING)
    # Columns from the foot to the back: (z_front, z_back, height).
    columns = [(-i * RUN, -(i + 1) * RUN, (i + 1) * RISE) for i in range(STEPS)]
    columns.append((-STEPS * RUN, back, top))
    below = 0.0
    for zf, zb, y in columns:
        quad((x0, below, zf), (x1, below, zf), (x1, y, zf), (x0, y, zf))  # riser, facing +Z
        quad((x0, y, zf), (x1, y, zf), (x1, y, zb), (x0, y, zb))  # tread, facing +Y
        quad((x1, 0.0, zf), (x1, 0.0, zb), (x1, y, zb), (x1, y, zf))  # side, facing +X
        quad((x0, 0.0, zb), (x0, 0.0, zf), (x0, y, zf), (x0, y, zb))  # side, facing -X
        below = y
    quad((x1, 0.0, back), (x0, 0.0, back), (x0, top, back), (x1, top, back))  # back wall, facing -Z
    return vertices, indices


def main():
    vertices, indices = geometry()
    positions = b"".join(struct.pack("<3f", *v) for v in vertices)
    index_bytes = b"".join(struct.pack("<H", i) for i in indices)
    data = index_bytes + positions  # indices first: both views stay 4-byte aligned
    lo = [min(v[k] for v in vertices) for k in range(3)]
    hi = [max(v[k] for v in vertices) for k in range(3)]
    doc = {
        "asset": {"version": "2.0", "generator": "handoff data/levels/make_stairs.py"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "Stairs", "mesh": 0}],
        "meshes": [{"name": "stairs", "primitives": [{"attributes": {"POSITION": 1}, "indices": 0, "mode": 4}]}],
        "accessors": [
            {"bufferView": 0, "componentType": 5123, "count": len(indices), "type": "SCALAR"},
            {"bufferView": 1, "componentType": 5126, "count": len(vertices), "type": "VEC3",
             "min": [round(x, 6) for x in lo], "max": [round(x, 6) for x in hi]},
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": len(index_bytes), "target": 34963},
            {"buffer": 0, "byteOffset": len(index_bytes), "byteLength": len(positions), "target": 34962},
        ],
        "buffers": [{"byteLength": len(data),
                     "uri": "data:application/octet-stream;base64," + base64.b64encode(data).decode()}],
    }
    with open(os.path.join(HERE, "stairs.gltf"), "w") as out:
        json.dump(doc, out, indent=1)
        out.write("\n")


if __name__ == "__main__":
    main()
