"""The link each function shows in Link Status: what the two ends trained to."""

from .pci_function import PciFunction
from .pci_names import DOWNSTREAM_FACING, bdf_name


def link_partner(function):
    """For a function below a downstream-facing port: that port; for a downstream-facing port:
    the function 0 below it."""
    if function.port in DOWNSTREAM_FACING:
        below = [child for child in function.children if child.pcie and not child.is_vf]
        return below[0] if below else None
    parent = function.parent
    if isinstance(parent, PciFunction) and parent.port in DOWNSTREAM_FACING:
        return parent
    return None


def current_link(function, functions_by_name):
    """(speed, width) as shown in Link Status, or None when the function has no link."""
    if function.is_vf:
        return (0, 0)
    if not function.pcie or function.link_cap is None:
        return None
    if function.link_cur:
        return function.link_cur
    partner = link_partner(function)
    if function.port in DOWNSTREAM_FACING:
        if partner is None:
            # an empty slot: link down, unless the description says what it shows
            if "link_down" not in function.spec:
                return (1, 0)
            return tuple(function.spec["link_down"])
        if partner.link_cur:
            return partner.link_cur
        if partner.link_cap is None:
            return function.link_cap
        return (min(function.link_cap[0], partner.link_cap[0]),
                min(function.link_cap[1], partner.link_cap[1]))
    if partner is not None:
        return current_link(partner, functions_by_name)
    # function 1..7 of a multi-function device shares function 0's link
    if function.fn != 0:
        function0 = functions_by_name.get(bdf_name(function.dom, function.bus, function.dev, 0))
        if function0 is not None:
            return current_link(function0, functions_by_name)
    return function.link_cap
