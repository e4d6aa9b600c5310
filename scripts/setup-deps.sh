#!/usr/bin/env bash
# Installs what p2pcheck needs to build and test on Debian 12, from Debian's own packages.
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  libpci-dev pciutils pci.ids libnvme-dev libjson-c-dev
  libssl-dev    # libnvme.pc lists openssl in Requires.private: pkg-config fails without it
  libarchive-dev zlib1g-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev python3
  libxml2-dev   # hwloc XML imports
  hwloc zstd    # tests: lstopo makes hwloc XML from the fixtures; tar --zstd unpacks captures
  clang-format  # tests: the format check (.clang-format, tests/format_test.sh)
)
# Kernel headers to compile kmod/ against (Debian's kernel: P2PDMA off, so its calls are stubs).
packages+=(linux-headers-amd64)
# Debian's HIP 5.2 runtime: `verify` loads it with dlopen (never linked); a unit test checks that on a
# machine without an AMD GPU it reports "no AMD GPU visible to HIP" and "hipFile not installed".
packages+=(libamdhip64-5)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
