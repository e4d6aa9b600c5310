"""Shared by the mkfixture tests: the package on sys.path, and small machines built from TOML text."""

import os
import sys
import tomllib

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOOLS = os.path.join(REPO, "tools")
LAUNCHER = os.path.join(TOOLS, "mkfixture.py")
if TOOLS not in sys.path:
    sys.path.insert(0, TOOLS)

from mkfixture.machine import Machine  # noqa: E402  (needs the path above)

# A root port 00:01.1 with a switch below it: upstream port 01:00.0, downstream ports 02:00.0 and
# 02:01.0, one endpoint below each. Bus numbers, windows and links are derived.
SWITCH_MACHINE = """
[kernel]
release = "6.8.0-1-generic"
iommu = "amd"

[[host_bridge]]
bus = 0

[template.dsp]
id = "1000:c030"
port = "downstream"
link = "gen5x16"
acs = 0x5f

[[pci]]
bdf = "00:01.1"
id = "1022:14ab"
port = "root_port"
sec = 1
link = "gen4x16"
acs = 0x5f
driver = "pcieport"

[[pci]]
bdf = "01:00.0"
id = "1000:c030"
port = "upstream"
sec = 2
link = "gen5x16"

[[pci]]
bdf = "02:00.0"
use = "dsp"
sec = 3

[[pci]]
bdf = "02:01.0"
use = "dsp"
sec = 4

[[pci]]
bdf = "03:00.0"
id = "1002:74a1"
class = 0x120000
link = "gen5x16"
driver = "amdgpu"
bars = ["0:m64p:256M", "2:m32:1M"]

[[pci]]
bdf = "04:00.0"
id = "1002:74a1"
class = 0x120000
link = "gen5x16"
bars = ["0:m64p:256M"]
"""

# A root port with a two-function device below it; function 0 has SR-IOV with two VFs enabled.
SRIOV_MACHINE = """
[[host_bridge]]
bus = 0x40
numa_node = 1

[[pci]]
bdf = "40:01.1"
id = "1022:14ab"
port = "root_port"
sec = 0x41
link = "gen4x16"

[[pci]]
bdf = "41:00.0"
id = "15b3:101d"
link = "gen4x16"
bars = ["0:m64p:32M"]
sriov = { total = 8, num = 2, vf_device = 0x101e, offset = 2, stride = 1, bars = ["0:m64p:1M"] }

[[pci]]
bdf = "41:00.1"
id = "15b3:101d"
link = "gen4x16"
"""


def description(toml_text):
    return tomllib.loads(toml_text)


def machine(toml_text):
    """A Machine with its tree filled in (nothing written to disk)."""
    built = Machine(description(toml_text))
    built.write()
    return built
