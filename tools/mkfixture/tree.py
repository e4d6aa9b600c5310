"""The output tree, held in memory and written out at the end in sorted order (deterministic)."""

import os
import shutil


class Tree:
    def __init__(self):
        self.files = {}            # "sys/bus/..." -> bytes
        self.links = {}            # "sys/bus/..." -> absolute target inside root ("/sys/devices/...")
        self.literal_links = {}    # [[symlink]] entries: the target exactly as written

    def write(self, path, data):
        path = path.lstrip("/")
        if isinstance(data, str):
            data = data.encode()
        if path in self.files or path in self.links:
            raise SystemExit("mkfixture: duplicate path %s" % path)
        self.files[path] = data

    def link(self, path, target):
        """target is absolute inside root; flush() makes it relative so root/ can move."""
        path = path.lstrip("/")
        if path in self.files or path in self.links:
            raise SystemExit("mkfixture: duplicate path %s" % path)
        self.links[path] = "/" + target.lstrip("/")

    def literal_link(self, path, target):
        path = path.lstrip("/")
        self.literal_links[path] = target

    def flush(self, root):
        """Replace root with the tree: files 0644, directories 0755, relative symlinks."""
        if os.path.lexists(root):
            shutil.rmtree(root)
        os.makedirs(root)
        all_paths = set(self.files) | set(self.links) | set(self.literal_links)
        for path in all_paths:
            parent = os.path.dirname(path)
            while parent:
                if parent in self.files or parent in self.links:
                    raise SystemExit("mkfixture: %s is both a file and a directory" % parent)
                parent = os.path.dirname(parent)
        for path in sorted(self.files):
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(self.files[path])
            os.chmod(full, 0o644)
        for path in sorted(self.links):
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            relative = os.path.relpath(self.links[path], "/" + os.path.dirname(path))
            os.symlink(relative, full)
        for path in sorted(self.literal_links):
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            os.symlink(self.literal_links[path], full)
        # directory modes are not tracked by git; keep them uniform anyway
        for dirpath, dirnames, _ in os.walk(root):
            for d in dirnames:
                full = os.path.join(dirpath, d)
                if not os.path.islink(full):
                    os.chmod(full, 0o755)
