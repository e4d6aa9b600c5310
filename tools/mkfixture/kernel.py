"""The [kernel] table: the release and the settings that change what Linux writes to the devices."""


def kernel_version(release):
    """'6.8.0-142-generic' -> (6, 8, 0), compared against the versions that changed sysfs."""
    numbers = []
    for part in release.split("-")[0].split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        numbers.append(int(digits) if digits else 0)
    while len(numbers) < 3:
        numbers.append(0)
    return tuple(numbers[:3])


class KernelSettings:
    def __init__(self, desc):
        kernel = desc.get("kernel", {})
        self.release = kernel.get("release", "6.8.0-generic")
        self.version = kernel_version(self.release)
        # amdgpu DKMS can carry a newer KFD than the kernel it is built for
        self.kfd_version = kernel_version(kernel.get("kfd_version", self.release))
        self.iommu = kernel.get("iommu", "none")
        self.iommu_domain = kernel.get("iommu_domain", "DMA-FQ")
        self.acs_redir_disabled = set(kernel.get("disable_acs_redir", []))
        self.dm_major = kernel.get("dm_major", 253)
