"""BAR addresses and bridge windows: each bus's BARs and child windows packed, largest first,
naturally aligned, like the firmware/Linux assignment real machines show."""

from .sizes import align_up

WINDOW_KINDS = ("mem", "pref", "io")


def window_granularity(kind):
    """Bridge I/O windows are 4K-aligned, memory windows 1M-aligned."""
    return 0x1000 if kind == "io" else 0x100000


class Placement:
    """Something placed inside a bridge window: a BAR or a child bridge's window."""

    def __init__(self, size, align, bar=None, bridge=None):
        self.size = size
        self.align = align
        self.bar = bar
        self.bridge = bridge
        self.children = []       # a bridge's own placements, relative to its window
        self.offset = 0


def bus_placements(children, kind):
    """What the functions on a bus need from a window of this kind (VFs use their PF's IOV BARs)."""
    placements = []
    for child in children:
        if child.is_vf:
            continue
        for bar in child.all_bars():
            if bar.window == kind:
                size = bar.total
                placements.append(Placement(size, bar.size if bar.iov else size, bar=bar))
        if child.is_bridge:
            below = bus_placements(child.children, kind)
            if below:
                size, align = pack(below, window_granularity(kind))
                placement = Placement(size, align, bridge=child)
                placement.children = below
                placements.append(placement)
    return placements


def pack(placements, granularity):
    """Give each placement its offset (sorts the list); -> (window size, window alignment)."""
    placements.sort(key=lambda p: (-p.align, -p.size))
    offset = 0
    for placement in placements:
        offset = align_up(offset, placement.align)
        placement.offset = offset
        offset += placement.size
    align = max([granularity] + [p.align for p in placements])
    return align_up(max(offset, granularity), granularity), align


def assign(placements, kind, base):
    for placement in placements:
        address = base + placement.offset
        if placement.bar is not None:
            placement.bar.address = address
        else:
            placement.bridge.windows[kind] = (address, placement.size)
            assign(placement.children, kind, address)


def allocate_addresses(host_bridges):
    for host_bridge in host_bridges:
        for kind in WINDOW_KINDS:
            placements = bus_placements(host_bridge.children, kind)
            if not placements:
                continue
            _, align = pack(placements, window_granularity(kind))
            assign(placements, kind, align_up(host_bridge.bases[kind], align))
