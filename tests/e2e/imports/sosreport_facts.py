#!/usr/bin/env python3
"""sosreport_facts.py P2PCHECK SOSREPORT [-- ARGS...]: every fact a sosreport (directory or tarball)
carries that the sosreport import takes is what p2pcheck reports from it (issue 50).

Reads the sosreport itself (tarfile and plain files in Python, not p2pcheck's readers) and compares
with what `p2pcheck --dump SOSREPORT ARGS topo --json` and `check --json` say:

  udev       sos_commands/devices/udevadm_info_--export-db: every fact udev_facts.py compares
             (IDs, classes, sysfs paths, parents, drivers, NVMe names and namespaces, CPU modalias)
  config     proc/bus/pci/BB/DD.F: each copy's size, port type, links and ACS registers, decoded
             as lspci_dump_facts.py decodes a hex dump (IDs and class are udev's)
  cpu        proc/cpuinfo's vendor_id, cpu family, model, model name (check cpu)
  kernel     the release: proc/sys/kernel/osrelease, else uname -a's third word (kernel.release,
             or with --assume-kernel the input's release kernel.what_if.input_release); the
             CONFIG_PCI_P2PDMA line of boot/config-RELEASE (kernel.p2pdma_config)
  cmdline    proc/cmdline's IOMMU and ACS parameters in the iommu.state finding's evidence
  modules    lsmod (or proc/modules): amdgpu loaded or not, in gpu.amdgpu_module's evidence
  host       hostname (identity.hostname); DMI from sys/class/dmi/id, where sos copied it
  absent     what the sosreport lacks is "not in this sosreport": the mount table, the IOMMU
             units, DMI, each PCI function's NUMA node; never an empty table or a made-up value

Prints what differs (the fact, the file, both values) and exits 1; else a one-line summary."""
import json
import os
import re
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lspci_dump_facts import decode  # noqa: E402
from udev_facts import db_problems  # noqa: E402
import facts_main

NOT_CARRIED = "not in this sosreport"
IOMMU_KEYS = ("intel_iommu", "amd_iommu", "iommu", "iommu.passthrough")


def top_of(path, tmp):
    """The sosreport's top folder (the one holding sos_commands/), unpacked when a tarball."""
    if not os.path.isdir(path):
        with tarfile.open(path) as t:
            t.extractall(tmp, filter="data")
        path = tmp
    if os.path.isdir(os.path.join(path, "sos_commands")):
        return path
    inner = [os.path.join(path, n) for n in os.listdir(path)]
    if len(inner) == 1 and os.path.isdir(os.path.join(inner[0], "sos_commands")):
        return inner[0]
    sys.exit("sosreport_facts.py: no sos_commands/ in " + path)


def text(top, rel):
    try:
        with open(os.path.join(top, rel), errors="replace") as f:
            return f.read()
    except OSError:
        return None


def cpuinfo(body):
    cpu = {}
    for line in body.split("\n\n")[0].splitlines():
        if ":" in line:
            key, value = (x.strip() for x in line.split(":", 1))
            cpu.setdefault(key, value)
    out = {"vendor": cpu.get("vendor_id"), "model_name": cpu.get("model name")}
    for key, field in (("cpu family", "family"), ("model", "model")):
        if cpu.get(key, "").isdigit():
            out[field] = int(cpu[key])
    return {k: v for k, v in out.items() if v is not None}


def configs(top):
    """{bdf: decoded} of every proc/bus/pci copy of a length the kernel gives."""
    out, base = {}, os.path.join(top, "proc/bus/pci")
    for folder in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        if not os.path.isdir(os.path.join(base, folder)):
            continue
        domain, bus = folder.split(":") if ":" in folder else ("0000", folder)
        for name in sorted(os.listdir(os.path.join(base, folder))):
            with open(os.path.join(base, folder, name), "rb") as f:
                data = f.read()
            if len(data) in (64, 256, 4096) and re.match(r"^[0-9a-f]{2}\.[0-7]$", name):
                out["%s:%s:%s" % (domain, bus, name)] = decode(bytearray(data))
    return out


def finding(check, fid):
    return next((f for f in check["findings"] if f["id"] == fid), None)


def compare(binary, path, args):
    topo = json.loads(facts_main.p2pcheck([binary, "--dump", path] + args + ["topo", "--json"]))
    check = json.loads(facts_main.p2pcheck([binary, "--dump", path] + args + ["check", "--json"]))
    with tempfile.TemporaryDirectory() as tmp:
        top = top_of(path, tmp)
        return facts_problems(top, path, topo, check)


def facts_problems(top, path, topo, check):
    problems, counted = [], {}

    def want(what, where, expected, actual):
        counted[what.split()[0]] = counted.get(what.split()[0], 0) + 1
        if expected != actual:
            problems.append("%s: %s/%s says %r, p2pcheck %r" % (what, path, where, expected, actual))

    db = os.path.join(top, "sos_commands/devices/udevadm_info_--export-db")
    dmi_copied = os.path.isdir(os.path.join(top, "sys/class/dmi/id"))
    udev_problems, udev_facts = db_problems(db, topo, check, NOT_CARRIED, dmi_here=not dmi_copied)
    problems += udev_problems
    got = {f["bdf"]: f for f in topo["functions"]}
    for bdf, d in configs(top).items():
        g = got.get(bdf, {})
        # IDs and class are udev's (an SR-IOV VF's config space reads ffff as its IDs)
        for key in ("config_size", "port_type"):
            if key in d:
                want("config %s %s" % (bdf, key), "proc/bus/pci", d[key], g.get(key))
        for key in ("link", "acs"):
            if key in d:
                want("config %s %s" % (bdf, key), "proc/bus/pci", d[key], {k: (g.get(key) or {}).get(k) for k in d[key]})
    if (body := text(top, "proc/cpuinfo")) is not None:
        cpu = cpuinfo(body)
        want("cpu", "proc/cpuinfo", cpu, {k: check["cpu"].get(k) for k in cpu})
    release = (text(top, "proc/sys/kernel/osrelease") or "").strip()
    if not release and (uname := text(top, "sos_commands/kernel/uname_-a")) and uname.split()[:1] == ["Linux"]:
        release = uname.split()[2]
    if release:
        kernel = check["kernel"]
        got_release = kernel["what_if"]["input_release"] if kernel.get("what_if") else kernel["release"]
        want("kernel release", "uname -a", release, got_release)
        config = text(top, "boot/config-" + release)
        if config is not None and not check["kernel"].get("what_if"):
            on = re.search(r"^CONFIG_PCI_P2PDMA=y$", config, re.M) is not None
            want("kernel config CONFIG_PCI_P2PDMA", "boot/config-" + release, on, check["kernel"]["p2pdma_config"])
    if (cmdline := text(top, "proc/cmdline")) is not None:
        params = [w for w in cmdline.split() if w.split("=")[0] in IOMMU_KEYS or
                  re.match(r"^pci=(disable_acs_redir|config_acs)=", w)]
        iommu = finding(check, "iommu.state") or {"evidence": []}
        shown = " ".join(e["value"] for e in iommu["evidence"] if e["file"] == "/proc/cmdline")
        want("cmdline IOMMU parameters", "proc/cmdline", params, [p for p in params if p in shown.split()])
    lsmod = text(top, "sos_commands/kernel/lsmod") or ""
    modules = text(top, "proc/modules") or lsmod
    module = finding(check, "gpu.amdgpu_module")
    if modules.strip() and module:
        loaded = any(line.split()[:1] == ["amdgpu"] for line in modules.splitlines())
        value = next(e["value"] for e in module["evidence"] if e["file"] == "/proc/modules")
        want("modules amdgpu", "sos_commands/kernel/lsmod", loaded, value.startswith("amdgpu "))
    host = (text(top, "hostname") or text(top, "sos_commands/host/hostname") or "").strip()
    if host:
        want("hostname", "hostname", host, check["identity"]["hostname"])
    for key, file in (("dmi_vendor", "sys_vendor"), ("dmi_product", "product_name")):
        if (value := text(top, "sys/class/dmi/id/" + file)) is not None:
            want("DMI " + key, "sys/class/dmi/id/" + file, value.strip() or None, check["identity"][key])
    absent_problems(top, path, check, want)
    return problems, udev_facts + "; " + ", ".join("%d %s" % (n, k) for k, n in sorted(counted.items()))


def absent_problems(top, path, check, want):
    """What the sosreport lacks is unknown in p2pcheck's answers, never found empty (the NUMA nodes
    and DMI: db_problems)."""
    evidence = {e["file"]: e["value"] for f in check["findings"] for e in f["evidence"]}
    if text(top, "proc/mounts") is None and "/proc/mounts" in evidence:
        want("absent mounts", "proc/mounts", NOT_CARRIED, evidence["/proc/mounts"])
    if not os.path.isdir(os.path.join(top, "sys/class/iommu")) and "/sys/class/iommu" in evidence:
        want("absent IOMMU units", "sys/class/iommu", NOT_CARRIED, evidence["/sys/class/iommu"])


if __name__ == "__main__":
    facts_main.run(__doc__, compare, "sosreport")
