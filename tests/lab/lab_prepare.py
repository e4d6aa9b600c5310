# SPDX-License-Identifier: GPL-2.0
"""Everything a boot needs, built once and cached: packages, lab kernels, Debian's stock kernel,
p2pprobe.ko per kernel, the static helpers and the initramfs parts (prepare())."""
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

import pattern
from lab_io import load_json
from lab_topology import CACHE, HERE, LAB_SERIES, PREPARE_VERSION, REPO


VERBOSE = False


def log(msg):
    print(f"lab: {msg}", file=sys.stderr, flush=True)


def run(cmd, **kw):
    if VERBOSE:
        log("+ " + " ".join(cmd))
    return subprocess.run(cmd, check=True, **kw)


class Work:
    def __init__(self, work):
        self.dir = os.path.abspath(work)
        os.makedirs(self.dir, exist_ok=True)

    def p(self, *a):
        return os.path.join(self.dir, *a)


_STOCK_ABI = None


def stock_abi():
    global _STOCK_ABI
    if _STOCK_ABI:
        return _STOCK_ABI
    _STOCK_ABI = subprocess.run([os.path.join(HERE, "setup-deps.sh"), "--print-stock-abi"], check=True,
                                capture_output=True, text=True).stdout.strip()
    return _STOCK_ABI


def lab_kernel_dir(series):
    r = subprocess.run([os.path.join(HERE, "build-kernel.sh"), "--print-path", series],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def kernels():
    """kind -> dict(bzimage, kdir, release-ish)."""
    k = {}
    for series in LAB_SERIES:
        d = lab_kernel_dir(series)
        if d:
            kdir = [os.path.join(d, x) for x in os.listdir(d) if x.startswith("linux-")][0]
            k[series] = {"bzimage": os.path.join(d, "bzImage"), "kdir": kdir, "dir": d}
    abi = stock_abi()
    sd = os.path.join(CACHE, f"stock-{abi}")
    k["stock"] = {"bzimage": os.path.join(sd, "boot", f"vmlinuz-{abi}"), "kdir": f"/usr/src/linux-headers-{abi}",
                  "abi": abi, "root": sd}
    return k


# --------------------------------------------------------------------------- prepare

def fetch_stock(abi):
    sd = os.path.join(CACHE, f"stock-{abi}")
    if os.path.exists(os.path.join(sd, "boot", f"vmlinuz-{abi}")) and \
            os.path.isdir(os.path.join(sd, "lib", "modules", abi)):
        return
    os.makedirs(sd, exist_ok=True)
    tmp = os.path.join(CACHE, "debs")
    os.makedirs(tmp, exist_ok=True)
    debs = [x for x in os.listdir(tmp) if x.startswith(f"linux-image-{abi}_")]
    if not debs:
        log(f"downloading linux-image-{abi}")
        run(["apt-get", "download", f"linux-image-{abi}"], cwd=tmp)
        debs = [x for x in os.listdir(tmp) if x.startswith(f"linux-image-{abi}_")]
    run(["dpkg", "-x", os.path.join(tmp, sorted(debs)[-1]), sd])


def build_module(kdir, out):
    # From scratch: kbuild does not notice that KDIR is another kernel (a changed kernel.config), and a
    # stale p2pprobe.mod.o from the old one gives "Invalid relocation target" at insmod.
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for f in ("p2pprobe.c", "Kbuild", "Makefile"):
        shutil.copy(os.path.join(REPO, "kmod", f), out)
    if os.path.isdir(os.path.join(out, "uapi")):
        shutil.rmtree(os.path.join(out, "uapi"))
    shutil.copytree(os.path.join(REPO, "kmod", "uapi"), os.path.join(out, "uapi"))
    run(["make", "-s", "-C", out, f"KDIR={kdir}"], stdout=subprocess.DEVNULL)
    return os.path.join(out, "p2pprobe.ko")


def build_helpers(w):
    b = w.p("bin")
    os.makedirs(b, exist_ok=True)
    inc = "-I" + os.path.join(REPO, "kmod")
    for name in ("p2pprobe-cli", "p2pmem-io", "kmod-abuse", "bench-io"):
        run(["gcc", "-static", "-O2", "-Wall", "-Werror", inc, "-o", os.path.join(b, name),
             os.path.join(HERE, name + ".c")])
    run(["gcc", "-O2", "-Wall", "-Werror", inc, "-o", os.path.join(b, "pattern-vectors"),
         os.path.join(HERE, "pattern-vectors.c")])
    c = subprocess.run([os.path.join(b, "pattern-vectors")], check=True, capture_output=True, text=True).stdout
    if c.strip().splitlines() != pattern.vectors():
        raise SystemExit("lab: tests/lab/pattern.py does not reproduce kmod/uapi/p2pprobe.h's pattern")


def mkcpio(staging, out):
    """newc archive of staging/, written atomically (a parallel run may be reading the old one)."""
    files = subprocess.run(["find", "."], cwd=staging, check=True, capture_output=True).stdout
    with open(out + ".tmp", "wb") as f:
        subprocess.run(["cpio", "-o", "-H", "newc", "-R", "0:0", "--quiet"], cwd=staging, input=files,
                       stdout=f, check=True)
    os.replace(out + ".tmp", out)


def ldd_libs(binary):
    out = subprocess.run(["ldd", binary], check=True, capture_output=True, text=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.search(r"(/\S+)\s+\(0x", line)
        if m:
            libs.append(m.group(1))
    return libs


def build_common_cpio(w, p2pcheck):
    st = w.p("stage-common")
    shutil.rmtree(st, ignore_errors=True)
    for d in ("bin", "sbin", "lib", "proc", "sys", "dev", "tmp", "out", "usr/share/misc", "boot"):
        os.makedirs(os.path.join(st, d), exist_ok=True)
    shutil.copy("/bin/busybox", os.path.join(st, "bin", "busybox"))
    applets = subprocess.run(["/bin/busybox", "--list"], check=True, capture_output=True, text=True).stdout.split()
    for a in applets:
        if a != "busybox":
            os.symlink("busybox", os.path.join(st, "bin", a))
    os.symlink("../bin/busybox", os.path.join(st, "sbin", "modprobe"))
    shutil.copy(os.path.join(HERE, "guest-init.sh"), os.path.join(st, "init"))
    os.chmod(os.path.join(st, "init"), 0o755)
    for name in ("p2pprobe-cli", "p2pmem-io", "kmod-abuse", "bench-io"):
        shutil.copy(w.p("bin", name), os.path.join(st, "bin", name))
    shutil.copy(os.path.join(HERE, "kmod-abuse.sh"), os.path.join(st, "kmod-abuse.sh"))
    # p2pcheck as built (dynamic): the libraries ldd lists and the loader, at their paths.
    # Debug info stripped from the copy (half the initramfs otherwise); the code is as built.
    run(["objcopy", "--strip-debug", p2pcheck, os.path.join(st, "bin", "p2pcheck")])
    for lib in ldd_libs(p2pcheck):
        dst = os.path.join(st, lib.lstrip("/"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy(os.path.realpath(lib), dst)
    shutil.copy("/usr/share/misc/pci.ids", os.path.join(st, "usr/share/misc/pci.ids"))
    mkcpio(st, w.p("common.cpio"))
    shutil.rmtree(st)


def build_kernel_cpio(w, kind, k):
    st = w.p(f"stage-{kind}")
    shutil.rmtree(st, ignore_errors=True)
    os.makedirs(os.path.join(st, "lib"))
    ko = build_module(k["kdir"], w.p("kmod", kind))
    shutil.copy(ko, os.path.join(st, "lib", "p2pprobe.ko"))
    if kind == "stock":
        abi = k["abi"]
        src = os.path.join(k["root"], "lib", "modules", abi)
        # nvme and what it depends on (modinfo), plus the crc64-rocksoft crypto driver t10-pi asks for.
        want, todo, seen = [], ["nvme", "crc64_rocksoft_generic"], set()
        index = {}
        for dp, _, fs in os.walk(os.path.join(src, "kernel")):
            for f in fs:
                if f.endswith((".ko", ".ko.xz")):
                    index[f.split(".ko")[0].replace("-", "_")] = os.path.join(dp, f)
        while todo:
            m = todo.pop().replace("-", "_")
            if m in seen or m not in index:
                continue
            seen.add(m)
            want.append(index[m])
            deps = subprocess.run(["/sbin/modinfo", "-F", "depends", index[m]], check=True,
                                  capture_output=True, text=True).stdout.strip()
            todo += [d for d in deps.split(",") if d]
        for f in want:
            rel = os.path.relpath(f, k["root"])
            dst = os.path.join(st, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if f.endswith(".xz"):
                with open(dst[:-3], "wb") as o:
                    subprocess.run(["xz", "-dc", f], stdout=o, check=True)
            else:
                shutil.copy(f, dst)
        for f in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
            if os.path.exists(os.path.join(src, f)):
                shutil.copy(os.path.join(src, f), os.path.join(st, "lib", "modules", abi, f))
        run(["/sbin/depmod", "-b", st, abi])
        os.makedirs(os.path.join(st, "boot"))
        shutil.copy(os.path.join(k["root"], "boot", f"config-{abi}"), os.path.join(st, "boot", f"config-{abi}"))
    mkcpio(st, w.p(f"{kind}.cpio"))
    shutil.rmtree(st)


def files_key(files, extra=""):
    h = hashlib.sha256(f"prepare v{PREPARE_VERSION}\n{extra}\n".encode())
    for f in files:
        st = os.stat(f)
        h.update(f"{f}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def inputs_keys(p2pcheck, kinds):
    """Keys of the common part (p2pcheck, busybox, helpers) and of each kernel's part (p2pprobe.ko)."""
    kmod = [os.path.join(REPO, "kmod", x) for x in ("p2pprobe.c", "Kbuild", "Makefile", "uapi/p2pprobe.h")]
    common = files_key([p2pcheck, "/bin/busybox", "/usr/share/misc/pci.ids"] + kmod +
                       [os.path.join(HERE, x) for x in ("guest-init.sh", "p2pprobe-cli.c", "p2pmem-io.c", "bench-io.c",
                                                        "pattern-vectors.c", "kmod-abuse.c", "kmod-abuse.sh")])
    keys = {"common": common}
    for kind in sorted(kinds):
        k = kinds[kind]
        keys[kind] = files_key(kmod + [k["bzimage"]], f"{kind}:{k['kdir']}")
    return keys


def prepare(w, p2pcheck, build_kernels=True):
    """Everything the boots need; cheap when nothing changed. Serialised by a lock."""
    os.makedirs(w.dir, exist_ok=True)
    with open(w.p(".lock"), "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        t0 = time.time()
        if build_kernels:
            run([os.path.join(HERE, "setup-deps.sh")])
            for series in LAB_SERIES:
                if not lab_kernel_dir(series):
                    log(f"building the {series} lab kernel (about 8-13 min on 2 cores)")
                run([os.path.join(HERE, "build-kernel.sh"), series], stdout=subprocess.DEVNULL)
            fetch_stock(stock_abi())
        stamp = w.p("prepared.json")
        prev = load_json(stamp) or {}
        ks = prev.get("kernels") if not build_kernels else None
        if not ks or not all(os.path.exists(k["bzimage"]) and os.path.isdir(k["kdir"]) for k in ks.values()) or \
                not all(s in ks and "dir" in ks[s] for s in LAB_SERIES):
            ks = kernels()
        for series in LAB_SERIES:
            if series not in ks:
                raise SystemExit(f"lab: no {series} lab kernel; run tests/lab/lab.py prepare")
        if not os.path.exists(ks["stock"]["bzimage"]):
            fetch_stock(ks["stock"]["abi"])
        keys = inputs_keys(p2pcheck, ks)
        done = prev.get("keys", {})
        todo = [part for part in keys if done.get(part) != keys[part] or not os.path.exists(w.p(f"{part}.cpio"))]
        if not todo:
            return ks
        log(f"building {', '.join(todo)} in {w.dir}")
        if "common" in todo:
            build_helpers(w)
            build_common_cpio(w, p2pcheck)
        for kind in LAB_SERIES + ("stock",):
            if kind in todo:
                build_kernel_cpio(w, kind, ks[kind])
        with open(stamp + ".tmp", "w") as f:
            json.dump({"keys": keys, "p2pcheck": p2pcheck, "kernels": ks}, f, indent=1)
        os.replace(stamp + ".tmp", stamp)
        log(f"prepared in {time.time() - t0:.0f} s")
        return ks
