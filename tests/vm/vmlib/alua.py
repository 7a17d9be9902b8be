# SPDX-License-Identifier: GPL-2.0
"""REPORT TARGET PORT GROUPS (SPC-4 6.37) through a raw connection, and
its parameter data taken apart."""

import struct

from . import rawiscsi as ri


def rtpg(c, extended=False, lun=0):
    """The parameter data, in length-only or extended format."""
    cdb = bytes([0xa3, 0x0a | (0x20 if extended else 0), 0, 0, 0, 0]) + \
        struct.pack(">I", 1024) + bytes(2)
    r = c.execute(cdb, lun=lun, read=True, edtl=1024)
    assert r.status == ri.GOOD, r.sense_triple
    return r.data


def groups(data, extended=False):
    """[(state, supported, tpg id, status code, [rtpi])]"""
    length = struct.unpack(">I", data[:4])[0]
    assert length + 4 == len(data), (length, data.hex())
    off, out = (8 if extended else 4), []
    while off < len(data):
        count = data[off + 7]
        ports = [struct.unpack(">H", data[off + 10 + 4 * i:off + 12 + 4 * i])[0]
                 for i in range(count)]
        out.append((data[off] & 0x0f, data[off + 1],
                    struct.unpack(">H", data[off + 2:off + 4])[0], data[off + 5], ports))
        off += 8 + 4 * count
    return out
