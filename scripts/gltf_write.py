"""Writes small glTF 2.0 files of triangle meshes: the project's level generators
(data/levels/make_stairs.py, tests/data/level/make_stairs.py, examples/game/make_stairs.py) share it.

    from gltf_write import Builder, quad, write_gltf, write_glb
    b = Builder("handoff data/levels/make_stairs.py")
    stairs = b.mesh("stairs", vertices, indices)
    b.doc["scenes"] = [{"nodes": [b.node(name="Stairs", mesh=stairs)]}]
    doc, data = b.finish()
    write_gltf("stairs.gltf", doc, data)      # the buffer as a base64 data URI
    write_glb("stairs.glb", doc, data)

Positions are little-endian float32 VEC3 with min/max (when finite), indices uint16 or, past
65,535 vertices, uint32; every buffer view starts 4-byte aligned. Deterministic: the same calls
give the same bytes.
"""
import base64
import json
import math
import struct

FLOAT, USHORT, UINT = 5126, 5123, 5125


def quad(vertices, indices, a, b, c, d):
    """Two triangles a-b-c, a-c-d (counter-clockwise seen from the side the face's normal points to)."""
    base = len(vertices)
    vertices.extend([a, b, c, d])
    indices.extend([base, base + 1, base + 2, base, base + 2, base + 3])


class Builder:
    def __init__(self, generator):
        self.bin = bytearray()
        self.doc = {"asset": {"version": "2.0", "generator": generator},
                    "buffers": [], "bufferViews": [], "accessors": [], "meshes": [], "nodes": [],
                    "scenes": []}

    def _view(self, data):
        while len(self.bin) % 4:
            self.bin.append(0)
        offset = len(self.bin)
        self.bin.extend(data)
        self.doc["bufferViews"].append({"buffer": 0, "byteOffset": offset, "byteLength": len(data)})
        return len(self.doc["bufferViews"]) - 1

    def mesh(self, name, vertices, indices=None, mode=4):
        """A mesh of one primitive; returns its index. mode: 4 triangles, 5 strip, 6 fan, 1 lines."""
        self.doc["meshes"].append({"name": name, "primitives": [self.primitive(vertices, indices, mode)]})
        return len(self.doc["meshes"]) - 1

    def primitive(self, vertices, indices=None, mode=4):
        data = b"".join(struct.pack("<3f", *v) for v in vertices)
        view = self._view(data)
        position = {"bufferView": view, "componentType": FLOAT, "count": len(vertices), "type": "VEC3"}
        if all(math.isfinite(c) for v in vertices for c in v):
            position["min"] = [min(v[k] for v in vertices) for k in range(3)]
            position["max"] = [max(v[k] for v in vertices) for k in range(3)]
        self.doc["accessors"].append(position)
        primitive = {"attributes": {"POSITION": len(self.doc["accessors"]) - 1}, "mode": mode}
        if indices is not None:
            wide = len(vertices) > 65535
            view = self._view(struct.pack("<%d%s" % (len(indices), "I" if wide else "H"), *indices))
            self.doc["accessors"].append({"bufferView": view, "componentType": UINT if wide else USHORT,
                                          "count": len(indices), "type": "SCALAR"})
            primitive["indices"] = len(self.doc["accessors"]) - 1
        return primitive

    def node(self, **fields):
        """A node (name, mesh, translation, rotation, scale, children); returns its index."""
        self.doc["nodes"].append(fields)
        return len(self.doc["nodes"]) - 1

    def finish(self):
        """The document (without its buffer) and the binary data, padded to 4 bytes."""
        while len(self.bin) % 4:
            self.bin.append(0)
        return self.doc, bytes(self.bin)


def data_uri(data):
    return "data:application/octet-stream;base64," + base64.b64encode(data).decode()


def write_gltf(path, doc, data, uri=None):
    """A .gltf with its buffer as a data URI, or as `uri` (a file the caller writes, or not)."""
    doc = json.loads(json.dumps(doc))
    doc["buffers"] = [{"byteLength": len(data), "uri": uri if uri is not None else data_uri(data)}]
    text = json.dumps(doc, indent=1, allow_nan=True).replace("NaN", "null")
    with open(path, "w") as out:
        out.write(text + "\n")


def write_glb(path, doc, data):
    """A binary glTF: the JSON chunk, then the BIN chunk."""
    doc = json.loads(json.dumps(doc))
    doc["buffers"] = [{"byteLength": len(data)}]
    text = json.dumps(doc, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 4)
    out = struct.pack("<III", 0x46546C67, 2, 12 + 8 + len(text) + 8 + len(data))
    out += struct.pack("<II", len(text), 0x4E4F534A) + text
    out += struct.pack("<II", len(data), 0x004E4942) + data
    with open(path, "wb") as f:
        f.write(out)
