# SPDX-License-Identifier: GPL-2.0
"""Small readers the lab's checks share: a guest's output files, JSON, key=value lines."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from check_json_pairs import pairs_in_full  # noqa: E402


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


def check_pairs(doc):
    """A check --json document's pairs, each in full (its decisions row joined); [] for no document."""
    if not isinstance(doc, dict):
        return []
    try:
        return list(pairs_in_full(doc).values())
    except (ValueError, KeyError, IndexError, TypeError):
        return []
