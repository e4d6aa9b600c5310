# SPDX-License-Identifier: GPL-2.0
"""One boot: the scenario's plan and disks, QEMU's command line, hot-unplug requests over QMP, and
the guest's payload unpacked."""
import base64
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import tarfile
import time

from lab_io import read
from lab_topology import CPUS, DISK_RANDOM, DISK_SIZE, DMA_LEN, IVSH_SIZE, MiB, QEMU_TIMEOUT
from lab_scenarios import ABUSE_CONC, ABUSE_KILL
from lab_prepare import mkcpio, run


def write_plan_cpio(sc, rdir):
    t = sc.t
    st = os.path.join(rdir, "stage-plan")
    shutil.rmtree(st, ignore_errors=True)
    os.makedirs(st)
    kdma = " ".join(f"{p}:{c}:{off}:{DMA_LEN}:{seed_for(sc, p, c, off)}{':bio' if bio else ''}"
                    for p, c, off, bio in t.kdma)
    udma = " ".join(f"{p}:{c}:{off}:{DMA_LEN}:{seed_for(sc, p, c, off)}" for p, c, off in t.udma) \
        if sc.p2pmem_allocate else ""
    plan = (f"SCENARIO={sc.name}\nKERNEL_KIND={'stock' if sc.kernel == 'stock' else 'lab'}\n"
            f"NVME_SERIALS=\"{' '.join(s for s, _ in t.nvme)}\"\nPROVIDERS=\"{' '.join(t.providers)}\"\n"
            f"CLIENTS=\"{' '.join(t.clients)}\"\nKDMA=\"{kdma}\"\nUDMA=\"{udma}\"\nMODE={sc.mode}\n")
    if sc.mode == "kmod-abuse":
        conc = " ".join(f"{p}:{c}:{off}:{MiB}:{seed_for(sc, p, c, off)}{':bio' if bio else ''}"
                        for p, c, off, bio in ABUSE_CONC)
        kill = " ".join(f"{n}:{p}:{c}:{a}" for n, p, c, a in ABUSE_KILL)
        plan += f"ABUSE_CONC=\"{conc}\"\nABUSE_KILL=\"{kill}\"\n"
    with open(os.path.join(st, "plan"), "w") as f:
        f.write(plan)
    if t.fs_disks or sc.verify:
        with open(os.path.join(st, "verify-setup.sh"), "w") as f:
            f.write(verify_setup_script(sc))
    if sc.verify or sc.watch_runs or sc.guest_script:
        with open(os.path.join(st, "verify.sh"), "w") as f:
            f.write(verify_script(sc))
    mkcpio(st, os.path.join(rdir, "plan.cpio"))
    shutil.rmtree(st)


def guest_words(text):
    """{x} -> the guest's PCI address of x, {dev:x} -> its block device (guest-init.sh: bdf_of, dev_of)."""
    return re.sub(r"\{(dev:)?(\w+)\}", lambda m: f"$({'dev_of' if m.group(1) else 'bdf_of'} {m.group(2)})", text)


def verify_setup_script(sc):
    """Sourced by guest-init.sh before p2pcheck looks at the machine: the file systems verify writes to."""
    lines = ["mkdir -p /run /mnt/loop"]
    for serial in sc.t.fs_disks:
        lines.append(f'mkdir -p /mnt/{serial} && mount -t ext4 "$(dev_of {serial})" /mnt/{serial} '
                     f'|| log "mount {serial} failed"')
    return "\n".join(lines) + "\n"


def verify_script(sc):
    """Sourced by guest-init.sh after the DMA tests: each run through vrun, in order."""
    lines = []
    for v in sc.verify:
        lines.append(f"# {v.name}")
        if v.setup:
            lines.append(f"( {guest_words(v.setup)} ) > $O/verify-{v.name}.setup 2>&1")
        if v.unplug:
            lines.append(f"vrun_unplug {v.name} {v.unplug} {guest_words(v.args)}")
        elif v.watch:
            lines.append(f"vwatch {v.name} {guest_words(v.args)}")
        else:
            lines.append(f"vrun {v.name} {guest_words(v.args)}")
        if v.after:
            lines.append(f"( {guest_words(v.after)} ) > $O/verify-{v.name}.after 2>&1")
        if v.capture_after:
            lines.append(f"vcapture {v.name}")
    for wr in sc.watch_runs:
        if wr.beside:
            lines.append(f"wbeside {wr.name} {shlex.quote(guest_words(wr.beside))} {guest_words(wr.command)}")
        else:
            lines.append(f"wrun {wr.name} {guest_words(wr.command)}")
    if sc.guest_script:
        lines.append(guest_words(sc.guest_script))
    return "\n".join(lines) + "\n"


def seed_for(sc, p, c, off):
    h = hashlib.sha256(f"{sc.name}:{p}:{c}:{off}".encode()).hexdigest()
    return "0x" + h[:16]


def initial_disk(sc, serial):
    """Deterministic initial content: DISK_RANDOM pseudo-random bytes, then zeros (raw disks: random throughout)."""
    size = sc.t.raw_disks.get(serial, DISK_SIZE)
    random = size if serial in sc.t.raw_disks else DISK_RANDOM
    img = bytearray(size)
    img[:random] = hashlib.shake_128(f"{sc.name}:{serial}".encode()).digest(random)
    return img


def make_ext4(path, size, stage=None):
    with open(path, "wb") as f:
        f.truncate(size)
    mkfs = shutil.which("mkfs.ext4") or "/sbin/mkfs.ext4"
    cmd = [mkfs, "-q", "-F", "-b", "4096", "-E", "lazy_itable_init=0,lazy_journal_init=0,root_owner=0:0"]
    run(cmd + (["-d", stage] if stage else []) + [path], stdout=subprocess.DEVNULL)


def make_disks(sc, rdir):
    disks = {}
    for serial, _ in sc.t.nvme:
        path = os.path.join(rdir, f"{serial}.img")
        if serial in sc.t.fs_disks:
            # ext4, holding an 8 MiB ext4 image for the loop-device case
            stage = os.path.join(rdir, f"stage-{serial}")
            os.makedirs(stage, exist_ok=True)
            make_ext4(os.path.join(stage, "inner.img"), 8 * MiB)
            make_ext4(path, sc.t.fs_disks[serial], stage)
            shutil.rmtree(stage)
        else:
            with open(path, "wb") as f:
                f.write(initial_disk(sc, serial))
        disks[serial] = path
    ivsh = None
    if "ivsh" in sc.t.providers:
        ivsh = os.path.join(rdir, "ivshmem.bin")
        with open(ivsh, "wb") as f:
            f.truncate(IVSH_SIZE)
    return disks, ivsh


def qemu_cmd(sc, ks, rdir, disks, ivsh):
    k = ks[sc.kernel]
    append = "console=ttyS0 panic=-1 quiet nvme.use_cmb_sqes=0"
    if sc.t.append:
        append += " " + sc.t.append
    cmd = ["qemu-system-x86_64", "-nodefaults", "-display", "none", "-machine", "q35", "-accel", "tcg",
           "-cpu", CPUS[sc.cpu][0], "-smp", "1", "-m", "1G", "-no-reboot",
           "-kernel", k["bzimage"], "-initrd", os.path.join(rdir, "initrd"), "-append", append,
           "-serial", "file:" + os.path.join(rdir, "console.log"),
           "-serial", "file:" + os.path.join(rdir, "payload.txt")]
    for serial, path in disks.items():
        extra = sc.t.drive_opts.get(serial)
        cmd += ["-drive", f"if=none,id=d{serial},file={path},format=raw" + (f",{extra}" if extra else "")]
    if any(v.unplug for v in sc.verify):
        cmd += ["-qmp", f"unix:{os.path.join(rdir, 'qmp.sock')},server=on,wait=off"]
    if ivsh:
        cmd += ["-object", f"memory-backend-file,id=ivshmem,size={IVSH_SIZE},mem-path={ivsh},share=on"]
    cmd += sc.t.qemu
    return cmd


def boot(sc, w, ks):
    rdir = w.p("run", sc.name)
    shutil.rmtree(rdir, ignore_errors=True)
    os.makedirs(rdir)
    write_plan_cpio(sc, rdir)
    with open(os.path.join(rdir, "initrd"), "wb") as o:
        for part in (w.p("common.cpio"), w.p(f"{sc.kernel}.cpio"), os.path.join(rdir, "plan.cpio")):
            with open(part, "rb") as i:
                shutil.copyfileobj(i, o)
    disks, ivsh = make_disks(sc, rdir)
    cmd = qemu_cmd(sc, ks, rdir, disks, ivsh)
    with open(os.path.join(rdir, "qemu-cmd.txt"), "w") as f:
        f.write(" ".join(cmd) + "\n")
    t0 = time.time()
    with open(os.path.join(rdir, "qemu.stderr"), "w") as err:
        q = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err, stderr=err)
        try:
            if any(v.unplug for v in sc.verify):
                watch_unplugs(q, rdir, t0)
            rc = q.wait(timeout=max(1, QEMU_TIMEOUT - (time.time() - t0)))
        except subprocess.TimeoutExpired:
            q.kill()
            q.wait()
            raise
    secs = time.time() - t0
    return rdir, disks, ivsh, secs, rc


UNPLUG_MARK = "@@P2PLAB-UNPLUG "


def qmp(rdir, command, arguments=None):
    """One QMP command on the guest's monitor socket; returns the reply (or the error) as a dict."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as so:
        so.settimeout(10)
        so.connect(os.path.join(rdir, "qmp.sock"))
        f = so.makefile("rw")
        json.loads(f.readline())                      # greeting
        for cmd in ({"execute": "qmp_capabilities"},
                    {"execute": command, **({"arguments": arguments} if arguments else {})}):
            f.write(json.dumps(cmd) + "\n")
            f.flush()
            while True:
                reply = json.loads(f.readline())
                if "return" in reply or "error" in reply:
                    break                             # events ("event": ...) are skipped
        return reply


def watch_unplugs(q, rdir, t0):
    """While QEMU runs: each "@@P2PLAB-UNPLUG <id>" the guest prints on its console -> QMP device_del <id>.
    Replies go to qmp.log (read by check_verify)."""
    console = os.path.join(rdir, "console.log")
    done, pos = set(), 0
    while q.poll() is None and time.time() - t0 < QEMU_TIMEOUT:
        text = read(console)
        for m in re.finditer(re.escape(UNPLUG_MARK) + r"(\w+)", text[pos:]):
            dev = m.group(1)
            if dev in done:
                continue
            done.add(dev)
            try:
                reply = qmp(rdir, "device_del", {"id": dev})
            except (OSError, ValueError) as e:
                reply = {"error": str(e)}
            with open(os.path.join(rdir, "qmp.log"), "a") as f:
                f.write(f"device_del {dev} at {time.time() - t0:.1f} s: {json.dumps(reply)}\n")
        pos = max(pos, len(text) - 200)
        time.sleep(0.2)


def unpack_payload(rdir):
    with open(os.path.join(rdir, "payload.txt"), "rb") as f:
        text = f.read().decode("ascii", "replace")
    m = re.search(r"@@P2PLAB-BEGIN\s*\n(.*?)@@P2PLAB-END (\d+)", text, re.S)
    if not m:
        return None
    blob = base64.b64decode(re.sub(r"[^A-Za-z0-9+/=]", "", m.group(1)))
    out = os.path.join(rdir, "out")
    os.makedirs(out, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tf:
        tf.extractall(out, filter="data") if hasattr(tarfile, "data_filter") else tf.extractall(out)
    return out
