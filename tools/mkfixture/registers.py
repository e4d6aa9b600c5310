"""A config space being filled in: little-endian register writes, each value cut to its width."""

import struct


class Registers:
    def __init__(self, size):
        self.data = bytearray(size)

    def put8(self, offset, value):
        struct.pack_into("<B", self.data, offset, value & 0xFF)

    def put16(self, offset, value):
        struct.pack_into("<H", self.data, offset, value & 0xFFFF)

    def put32(self, offset, value):
        struct.pack_into("<I", self.data, offset, value & 0xFFFFFFFF)
