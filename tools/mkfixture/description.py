"""Reading machine.toml: inheritance from a base description and [template.<name>] expansion."""

import os
import tomllib


def deep_merge(base, override):
    """Tables merge recursively; any other value (arrays included) in override replaces base's."""
    merged = dict(base)
    for key, value in override.items():
        if key in merged and isinstance(merged[key], dict) and isinstance(value, dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_description(path):
    with open(path, "rb") as f:
        data = tomllib.load(f)
    base = data.get("machine", {}).get("base")
    if base:
        parent = load_description(os.path.join(os.path.dirname(path), base))
        # the base's own `base` / description must not leak into the child
        data = deep_merge(parent, data)
        data["machine"]["base"] = base
    return data


def expand_templates(spec, templates, seen=()):
    """A [[pci]] entry with use = "<name>" (or a list): the templates' keys, then its own."""
    uses = spec.get("use", [])
    if isinstance(uses, str):
        uses = [uses]
    merged = {}
    for name in uses:
        if name in seen:
            raise SystemExit("mkfixture: template loop at %s" % name)
        if name not in templates:
            raise SystemExit("mkfixture: unknown template %s" % name)
        merged = deep_merge(merged, expand_templates(templates[name], templates, seen + (name,)))
    own = {key: value for key, value in spec.items() if key != "use"}
    return deep_merge(merged, own)
