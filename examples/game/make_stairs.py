#!/usr/bin/env python3
"""Writes stairs.glb, the example game's level: a 30 x 30 m floor of 1 m tiles (mesh "Floor", at
y = 0) and a staircase of seven 0.2 m steps (0.3 m deep, 3 m wide) from the floor up to a landing
1.4 m high and 3 m deep (mesh "Stairs", closed at the sides and the back), in metres, Y up (glTF's
convention). Deterministic: running it again gives the same bytes.

    python3 examples/game/make_stairs.py examples/game/stairs.glb
"""
import json
import struct
import sys

RISE, RUN, WIDTH, STEPS, LANDING = 0.2, 0.3, 3.0, 7, 3.0
FLOOR = 15.0  # half the floor's side [m]


def quad(verts, idx, a, b, c, d):
    """Two triangles a-b-c, a-c-d (counter-clockwise seen from the front)."""
    base = len(verts)
    verts.extend([a, b, c, d])
    idx.extend([base, base + 1, base + 2, base, base + 2, base + 3])


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
    meshes = [("Floor", *floor()), ("Stairs", *stairs())]
    binary = bytearray()
    views, accessors, gltf_meshes, nodes = [], [], [], []
    for n, (name, verts, idx) in enumerate(meshes):
        pos_offset = len(binary)
        for p in verts:
            binary += struct.pack("<3f", *p)
        idx_offset = len(binary)
        for k in idx:
            binary += struct.pack("<I", k)
        views.append({"buffer": 0, "byteOffset": pos_offset, "byteLength": idx_offset - pos_offset, "target": 34962})
        views.append({"buffer": 0, "byteOffset": idx_offset, "byteLength": 4 * len(idx), "target": 34963})
        lo = [min(p[a] for p in verts) for a in range(3)]
        hi = [max(p[a] for p in verts) for a in range(3)]
        accessors.append({"bufferView": 2 * n, "componentType": 5126, "count": len(verts), "type": "VEC3",
                          "min": lo, "max": hi})
        accessors.append({"bufferView": 2 * n + 1, "componentType": 5125, "count": len(idx), "type": "SCALAR"})
        gltf_meshes.append({"name": name, "primitives": [{"attributes": {"POSITION": 2 * n}, "indices": 2 * n + 1,
                                                          "mode": 4}]})
        nodes.append({"name": name, "mesh": n})
    doc = {
        "asset": {"version": "2.0", "generator": "handoff examples/game/make_stairs.py"},
        "scene": 0,
        "scenes": [{"nodes": list(range(len(nodes)))}],
        "nodes": nodes,
        "meshes": gltf_meshes,
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"byteLength": len(binary)}],
    }
    text = json.dumps(doc, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 4)
    binary += b"\0" * (-len(binary) % 4)
    total = 12 + 8 + len(text) + 8 + len(binary)
    with open(path, "wb") as f:
        f.write(struct.pack("<4sII", b"glTF", 2, total))
        f.write(struct.pack("<I4s", len(text), b"JSON") + text)
        f.write(struct.pack("<I4s", len(binary), b"BIN\0") + bytes(binary))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "stairs.glb")
