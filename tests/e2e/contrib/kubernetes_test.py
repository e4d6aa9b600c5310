#!/usr/bin/env python3
"""contrib/kubernetes/ offline (no cluster runs here; README "Fleets" says what is not run):
- yamllint (Debian's) passes on every manifest (lines up to 120 columns);
- each parses with python3-yaml; the DaemonSet's selector matches its pod's labels, every mount
  names a volume, the --nfd file lies in the features.d mount and the --prometheus file in the
  textfile mount;
- the DaemonSet's own p2pcheck command, with /host a fixture root and the mounts temporary
  directories, runs and writes both files (so its options are real options);
- every label the NodeFeatureRule and the example pod match on is one p2pcheck writes (read from
  the files just written), and every value they match is one p2pcheck can write.
Usage: kubernetes_test.py BINARY FIXTURE_TREES   (exit 77: yamllint or python3-yaml missing)
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("SKIP python3-yaml not installed")
    sys.exit(77)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))
K8S = os.path.join(REPO, "contrib/kubernetes")
# What `p2pcheck check --nfd` can write for each label (fleet/node_features.h).
VALUES = {"result": {"PASS", "FAIL", "UNKNOWN", "NO_PAIRS"}, "p2p": {"all", "partial", "none", "unknown"},
          "same-switch": {"true", "false", "unknown"}, "known-bad-kernel": {"true", "false", "unknown"}}
failures = []


def fail(what):
    print("FAIL " + what)
    failures.append(what)


def docs():
    out = {}
    for name in sorted(os.listdir(K8S)):
        if name.endswith(".yaml"):
            with open(os.path.join(K8S, name), encoding="utf-8") as f:
                out[name] = list(yaml.safe_load_all(f))
    return out


def check_daemonset(ds):
    spec = ds["spec"]
    pod = spec["template"]
    labels = pod["metadata"]["labels"]
    for k, v in spec["selector"]["matchLabels"].items():
        if labels.get(k) != v:
            fail(f"DaemonSet: selector {k}={v} does not match the pod's labels")
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    container = pod["spec"]["containers"][0]
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    for m in mounts.values():
        if m["name"] not in volumes:
            fail(f"DaemonSet: mount {m['mountPath']} names no volume {m['name']}")
    script = container["args"][0]
    nfd = re.search(r"--nfd (\S+)", script).group(1)
    prom = re.search(r"--prometheus (\S+)", script).group(1)
    if os.path.dirname(nfd) not in mounts or os.path.dirname(prom) not in mounts:
        fail(f"DaemonSet: {nfd} or {prom} is not in a mounted directory")
    if not prom.endswith(".prom"):
        fail("DaemonSet: the textfile collector reads only *.prom")
    return script, nfd, prom


def run_daemonset_command(binary, trees, script, nfd, prom, tmp):
    """The loop's p2pcheck line, once, on a fixture with temporary directories for the mounts."""
    line = " ".join(l.strip().rstrip("\\") for l in script.splitlines() if "p2pcheck" in l or l.strip().startswith("--"))
    args = shlex.split(line)
    args[0] = binary
    out_nfd = os.path.join(tmp, "features.d", os.path.basename(nfd))
    out_prom = os.path.join(tmp, "textfile", os.path.basename(prom))
    os.makedirs(os.path.dirname(out_nfd))
    os.makedirs(os.path.dirname(out_prom))
    args = [{"/host": os.path.join(trees, "epyc-mi300x-8gpu/root"), nfd: out_nfd, prom: out_prom}.get(a, a) for a in args]
    rc = subprocess.run(args, capture_output=True, text=True)
    print(f"DaemonSet command: {' '.join(args[1:])}: exit {rc.returncode}: {rc.stdout.strip()}")
    # 0, 1, 2, 4 are results (the loop goes on whatever the machine's); 3 and 5 are errors.
    if rc.returncode not in (0, 1, 2, 4) or not os.path.isfile(out_nfd) or not os.path.isfile(out_prom):
        fail(f"the DaemonSet's p2pcheck command failed: {rc.stderr}")
        return {}
    labels = {}
    for l in open(out_nfd, encoding="utf-8"):
        if l.strip() and not l.startswith("#"):
            k, v = l.strip().split("=", 1)
            labels[k] = v
    return labels


def matched(rule_doc):
    """(label, values) of every local.label expression of a NodeFeatureRule, matchAny included."""
    out = []
    for rule in rule_doc["spec"]["rules"]:
        groups = [rule.get("matchFeatures", [])] + [a["matchFeatures"] for a in rule.get("matchAny", [])]
        for group in groups:
            for m in group:
                if m["feature"] == "local.label":
                    for k, e in m["matchExpressions"].items():
                        out.append((k, e.get("value", [])))
    return out


def main():
    binary, trees = sys.argv[1], sys.argv[2]
    if not shutil.which("yamllint"):
        print("SKIP yamllint not installed (scripts/setup-deps.sh)")
        return 77
    lint = subprocess.run(["yamllint", "-d", "{extends: default, rules: {line-length: {max: 120}, document-start: disable}}",
                           K8S], capture_output=True, text=True)
    if lint.returncode != 0:
        fail("yamllint:\n" + lint.stdout)
    all_docs = docs()
    kinds = {d["kind"]: d for ds in all_docs.values() for d in ds}
    script, nfd, prom = check_daemonset(kinds["DaemonSet"])
    with tempfile.TemporaryDirectory() as tmp:
        labels = run_daemonset_command(binary, trees, script, nfd, prom, tmp)
    prefix = "feature.node.kubernetes.io/p2pcheck."
    expressions = matched(kinds["NodeFeatureRule"])
    expressions += [(k, [v]) for k, v in kinds["Pod"]["spec"]["nodeSelector"].items()]
    ours = 0
    for label, values in expressions:
        if not label.startswith(prefix):
            continue  # the site's own label, or nvidia_fs
        ours += 1
        if label not in labels:
            fail(f"{label} is matched but p2pcheck --nfd does not write it (it writes {sorted(labels)})")
        for v in values:
            if v not in VALUES.get(label[len(prefix):], set()):
                fail(f"{label} matched on {v!r}, which p2pcheck never writes")
    print(f"kubernetes: {len(all_docs)} manifests, {ours} p2pcheck label matches, labels written: {len(labels)}")
    print("not run here: kubectl --dry-run (it needs an API server), NFD itself, the taint on a node")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
