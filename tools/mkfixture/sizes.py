"""Sizes as machine.toml writes them ("256G", "100s", 4096) and address alignment."""

SUFFIX_BYTES = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}
SECTOR_BYTES = 512


def size_of(value):
    """'256G' -> bytes (powers of 1024), '100s' -> 100 * 512, an int stays as it is."""
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if text.endswith("s"):
        return int(text[:-1], 0) * SECTOR_BYTES
    if text and text[-1].upper() in SUFFIX_BYTES:
        return int(float(text[:-1]) * SUFFIX_BYTES[text[-1].upper()])
    return int(text, 0)


def align_up(value, alignment):
    return (value + alignment - 1) // alignment * alignment
