# SPDX-License-Identifier: GPL-2.0
"""Small readers the lab's checks share: a guest's output files, JSON, key=value lines."""
import json
import re


def kv(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
