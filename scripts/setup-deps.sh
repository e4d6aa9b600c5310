#!/usr/bin/env bash
# Installs what p2pcheck needs on Debian 12, from Debian's own packages.
#   scripts/setup-deps.sh            everything: build, unit and ctest tests, packages (CI, scripts/test.sh)
#   scripts/setup-deps.sh --tool     only what building the p2pcheck binary needs (scripts/run.sh)
#   scripts/setup-deps.sh --package  the binary and its packages (scripts/package.sh, scripts/release.sh)
# (The QEMU lab's packages: tests/lab/setup-deps.sh.)
set -euo pipefail
mode=${1:-all}
case $mode in all | --tool | --package) ;; *) echo "usage: $0 [--tool|--package]" >&2; exit 3 ;; esac

packages=(
  build-essential cmake pkg-config git
  libpci-dev pciutils pci.ids libnvme-dev libjson-c-dev
  libssl-dev    # libnvme.pc lists openssl in Requires.private: pkg-config fails without it
  libarchive-dev zlib1g-dev nlohmann-json3-dev libcli11-dev
  libxml2-dev   # hwloc XML imports
  libtomlplusplus-dev # --plan files (src/plan/): toml++, linked as Debian's libtomlplusplus3
  python3       # tools/mkfixture.py: the bundled reference machine
  # `p2pcheck watch` (src/live/bpf/): clang compiles the CO-RE probe, bpftool writes its skeleton,
  # libbpf loads it (linked statically, with libelf and zlib).
  clang llvm libbpf-dev bpftool libelf-dev
)
if [ "$mode" != --tool ]; then
  # The .deb packages: CPack's Depends come from dpkg-shlibdeps (dpkg-dev), which CPack feeds with
  # what `file` calls ELF; the man page is compressed with gzip.
  packages+=(dpkg-dev file gzip)
  # scripts/release.sh (packaging/README.md "Release"): debootstrap makes the Debian bullseye sysroot
  # the portable binary links against (and the chroots the release tests run it in); the static
  # libraries libarchive and libxml2 need (.a files: their -dev packages); rpm's rpmbuild for CPack's
  # RPMs, rpmlint to check them.
  packages+=(debootstrap libacl1-dev libzstd-dev liblz4-dev liblzma-dev libbz2-dev nettle-dev libicu-dev
             rpm rpmlint)
fi
if [ "$mode" = all ]; then
  packages+=(
    libgtest-dev libgmock-dev
    hwloc zstd      # tests: lstopo makes hwloc XML from the fixtures; tar --zstd unpacks captures
    clang-format    # tests: the format check (.clang-format, tests/house/format_test.sh)
    universal-ctags # tests: function extents for the size check (tests/house/sizes_test.py)
    groff-base      # tests: the man page formats without a warning
    bash-completion # tests: the completion is driven through bash-completion's helpers
    dkms kmod       # tests: `dkms build` of the packaged module source (package test)
    graphviz        # tests: `topo --svg` renders with dot and the SVG is parsed (tests/cli/svg_render_test.cc)
  )
  # p2pcheck fleet and contrib/ (tests/e2e/fleet_test.sh, tests/e2e/contrib/): xmllint parses the fleet
  # page; the Ansible playbook and the Slurm batch script run for real (slurmctld + slurmd + munged
  # started by the test on this one node).
  packages+=(libxml2-utils ansible slurm-wlm munge)
  # The views fleets read (tests/e2e/fleet_engines_test.sh, tests/e2e/contrib/kubernetes_test.py): Debian's
  # node_exporter scrapes check --prometheus's textfile on 127.0.0.1, promtool (package prometheus) lints
  # it, yamllint and python3-yaml read contrib/kubernetes/.
  packages+=(prometheus-node-exporter prometheus yamllint python3-yaml)
  # Kernel headers to compile kmod/ against (Debian's kernel: P2PDMA off, so its calls are stubs).
  packages+=(linux-headers-amd64)
  # Debian's HIP 5.2 runtime: `verify` loads it with dlopen (never linked); a unit test checks that on a
  # machine without an AMD GPU it reports "no AMD GPU visible to HIP" and "hipFile not installed".
  packages+=(libamdhip64-5)
  # Reliability tests (issue 15; tests/fuzz/README.md): clang builds the tree (clang_tree) with
  # ASan/UBSan (asan_suite) and libFuzzer, whose runtime ships in libclang-rt-14-dev (Debian's
  # libfuzzer-14-dev only adds the standalone libFuzzer.a, not needed with -fsanitize=fuzzer).
  packages+=(clang libclang-rt-14-dev)
  # tests: the JSON Schema check (docs/schema/p2pcheck.schema.json) validates every command's output.
  packages+=(python3-jsonschema)
  # bench/: Google Benchmark for decide_bench (ctest bench_decide), GNU time for run.sh's peak memory.
  packages+=(libbenchmark-dev time)
  # The whole suite compiles the tree twice (gcc, then clang with sanitizers): ccache keeps both
  # between runs in ~/.cache/ccache, so a later run of another clone compiles only what changed.
  packages+=(ccache)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  # The tests start their own exporter on 127.0.0.1; the services these packages enable (ports 9090
  # and 9100 on every address) are not wanted on a build machine: stopped when installed here.
  for service in prometheus prometheus-node-exporter; do
    if [[ " ${missing[*]} " == *" $service "* ]] && command -v systemctl > /dev/null && [ -d /run/systemd/system ]; then
      $SUDO systemctl disable --now "$service" 2> /dev/null || true
    fi
  done
fi
