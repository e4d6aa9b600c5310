# SPDX-License-Identifier: GPL-2.0
"""Lab captures kept as fixtures (fixtures/lab/<scenario>/): a capture replayed against the live
run and the stored fixture, and the deterministic archive it is stored as."""
import json
import os
import re
import shutil
import subprocess
import tarfile

from lab_io import check_pairs, load_json, read
from lab_topology import CPUS, FIXTURES, REPO
from lab_prepare import log, run


PAIR_FIELDS = ("gpu", "nvme", "common_bridge", "distance", "path_distance", "map_type", "verdict", "rule")


# "6.12.117's P2PDMA allowlist": the stored captures were booted on the Debian linux-source of
# their day; the registry only offers the newest stable update (6.12.117 became 6.12.118), whose
# rules are those of the same series. The verdict is compared, not the patch level it names.
KERNEL_PATCH_LEVEL = re.compile(r"\b(\d+\.\d+)\.\d+((?:-[0-9A-Za-z.+~-]*)?)'s ")
# The kernel's own allowlist is read from the running kernel in the guest and from the capture on
# replay: the same rows, named by where they were read.
OWN_TABLE_FROM = re.compile(r"\(this kernel's own, from [^)]*\)")


def pair_core(p):
    core = {k: p.get(k) for k in PAIR_FIELDS}
    if isinstance(core.get("rule"), str):
        core["rule"] = OWN_TABLE_FROM.sub("(this kernel's own)", KERNEL_PATCH_LEVEL.sub(r"\1.x\2's ", core["rule"]))
    return core


def replay(p2pcheck, root, gpus, nvmes, how="--root"):
    # pair_core() reads each pair in full (check_pairs), as the guest's check.json has it, and
    # expected/check.json (written from this) is tests/lab/replay_test.sh's golden.
    # Pretty JSON: strip_source() drops the "source" line, as replay_test.sh does.
    r = subprocess.run([p2pcheck, how, root, "check", "--json=pretty", "--gpu", gpus, "--nvme", nvmes],
                       capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


# A stored lab fixture is one archive in p2pcheck's own capture format (top folder
# p2pcheck-capture/), not ~350 loose files in git. The recipe is fixed (sorted members, owner 0,
# mtime 0, fixed modes, GNU format, zstd -19) so re-recording an unchanged tree gives the same bytes.
# Symlink targets are left alone by the transform (flag S): they start with "../".
PACK_TAR = ["tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner", "--mtime=@0",
            "--mode=a=rX,u+w", "--format=gnu", "--transform=s,^\\.,p2pcheck-capture,S"]


def fixture_archive(name):
    return os.path.join(FIXTURES, name, f"{name}.tar.zst")


def pack_capture(root, dest):
    """Unpacked capture tree `root` -> `dest` (.tar.zst), deterministically; replaced atomically."""
    tmp = dest + ".tmp"
    env = dict(os.environ, LC_ALL="C")
    with open(tmp, "wb") as f:
        tar = subprocess.Popen(PACK_TAR + ["-C", root, "-cf", "-", "."], stdout=subprocess.PIPE, env=env)
        z = subprocess.run(["zstd", "-19", "-q", "-c"], stdin=tar.stdout, stdout=f)
        tar.stdout.close()
        if tar.wait() != 0 or z.returncode != 0:
            os.remove(tmp)
            raise SystemExit(f"lab: packing {root} into {dest} failed")
    os.replace(tmp, dest)


def unpack_capture(archive, dest):
    """`archive` (a capture .tar.zst) -> its tree directly under `dest` (top folder stripped)."""
    os.makedirs(dest, exist_ok=True)
    run(["tar", "--zstd", "-C", dest, "--strip-components=1", "-xf", archive])
    return dest


def strip_source(text):
    return "".join(line for line in text.splitlines(True) if '"source"' not in line)


def check_capture(sc, ck, w, p2pcheck, rdir, out, dev, chk, kern, update_fixtures, result):
    crc = read(os.path.join(out, "capture.rc")).strip()
    if not ck.ok(crc == "0" and os.path.exists(os.path.join(out, "capture.tar.gz")),
                 f"p2pcheck capture failed (exit {crc}): {read(os.path.join(out, 'capture.out'))[:300]}"):
        return
    root = os.path.join(rdir, "capture-root")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    with tarfile.open(os.path.join(out, "capture.tar.gz")) as tf:
        tf.extractall(root, filter="fully_trusted") if hasattr(tarfile, "data_filter") else tf.extractall(root)
    tops = os.listdir(root)
    if len(tops) == 1 and os.path.isdir(os.path.join(root, tops[0])) and tops[0] not in ("sys", "proc"):
        inner = os.path.join(root, tops[0])
        for x in os.listdir(inner):
            os.rename(os.path.join(inner, x), os.path.join(root, x))
        os.rmdir(inner)
    # Empty directories stay: one is evidence (sys/module/nvme_core/parameters/ without `multipath`
    # says the kernel has no native multipath; without the folder that fact is unknown).
    gpus = ",".join(dev[p][0] for p in sc.t.providers)
    nvmes = ",".join(dev[c][0] for c in sc.t.clients)
    rc, text, err = replay(p2pcheck, root, gpus, nvmes)
    rep = json.loads(text) if text.strip().startswith("{") else None
    if not ck.ok(rep is not None, f"replay of the capture failed (exit {rc}): {err[:300]}"):
        return
    live = sorted((pair_core(p) for p in check_pairs(chk)), key=lambda x: (x["gpu"], x["nvme"]))
    again = sorted((pair_core(p) for p in check_pairs(rep)), key=lambda x: (x["gpu"], x["nvme"]))
    ck.ok(live == again, "the capture replayed on the host gives other verdicts than the live run:\n"
          + json.dumps({"live": live, "replay": again}, indent=1)[:3000])
    fx = os.path.join(FIXTURES, sc.name)
    args = f"--gpu {gpus} --nvme {nvmes}\n"
    archive = fixture_archive(sc.name)
    if update_fixtures and sc.fixture:
        shutil.rmtree(fx, ignore_errors=True)
        os.makedirs(os.path.join(fx, "expected"))
        pack_capture(root, archive)
        # The archive must give back exactly the tree it was made from (contents, symlink targets).
        back = os.path.join(rdir, "capture-check")
        shutil.rmtree(back, ignore_errors=True)
        unpack_capture(archive, back)
        d = subprocess.run(["diff", "-r", "--no-dereference", root, back], capture_output=True, text=True)
        ck.ok(d.returncode == 0, f"{os.path.relpath(archive, REPO)} does not unpack to the captured tree:\n"
              + d.stdout[:2000] + d.stderr[:500])
        with open(os.path.join(fx, "args"), "w") as f:
            f.write(args)
        # expected output: p2pcheck on the stored archive, the `source` line removed
        rc2, text2, err2 = replay(p2pcheck, archive, gpus, nvmes, how="--dump")
        with open(os.path.join(fx, "expected", "check.json"), "w") as f:
            f.write(strip_source(text2))
        with open(os.path.join(fx, "expected", "exit_code"), "w") as f:
            f.write(f"{rc2}\n")
        kj = {"scenario": sc.name, "describe": sc.t.describe, "cpu": CPUS[sc.cpu][2], "kernel": sc.kernel,
              "cmdline": read(os.path.join(out, "cmdline")).strip(),
              "pairs": [{"provider": p, "client": c, "provider_bdf": dev[p][0], "client_bdf": dev[c][0],
                         "distance": int(kern[(p, c)]["distance"]), "map_type": kern[(p, c)].get("map_type"),
                         "map_reason": kern[(p, c)].get("map_reason")}
                        for p in sc.t.providers for c in sc.t.clients]}
        with open(os.path.join(fx, "expected", "kernel.json"), "w") as f:
            json.dump(kj, f, indent=1)
            f.write("\n")
        log(f"{sc.name}: wrote {os.path.relpath(fx, REPO)}")
    # The stored fixture replayed by the same binary: differences come from the trees alone.
    if not sc.fixture:
        return
    if not ck.ok(os.path.isfile(archive), f"no stored fixture {os.path.relpath(archive, REPO)} "
                 f"(run: tests/lab/lab.py run --update-fixtures {sc.name}, review, commit)"):
        return
    ck.ok(read(os.path.join(fx, "args")) == args,
          f"fixture args differ: {read(os.path.join(fx, 'args')).strip()} vs {args.strip()}")
    rc3, text3, err3 = replay(p2pcheck, archive, gpus, nvmes, how="--dump")
    stored = json.loads(text3) if text3.strip().startswith("{") else None
    if not ck.ok(stored is not None, f"replay of the stored fixture failed (exit {rc3}): {err3[:300]}"):
        return
    old = sorted((pair_core(p) for p in check_pairs(stored)), key=lambda x: (x["gpu"], x["nvme"]))
    ck.ok(old == again, "a fresh capture's verdicts differ from the stored fixture "
          f"{os.path.relpath(fx, REPO)}:\n" + json.dumps({"stored": old, "fresh": again}, indent=1)[:3000])
    kj = load_json(os.path.join(fx, "expected", "kernel.json")) or {}
    stored_k = {(k["provider"], k["client"]): (k["distance"], k["map_type"]) for k in kj.get("pairs", [])}
    fresh_k = {(p, c): (int(kern[(p, c)]["distance"]), kern[(p, c)].get("map_type"))
               for p in sc.t.providers for c in sc.t.clients if (p, c) in kern}
    ck.ok(stored_k == fresh_k, f"the kernel's verdicts differ from the stored fixture's kernel.json: "
          f"stored {stored_k}, fresh {fresh_k}")
