"""The repository's source files as the house-rule checks (layers_test.py, sizes_test.py) walk them."""
import os


def source_files(repo, tops, suffixes):
    """(path relative to repo, path) of each file under the `tops` folders ending in one of `suffixes`,
    folders and files in name order, __pycache__ left out."""
    for top in tops:
        for dirpath, dirnames, names in os.walk(os.path.join(repo, top)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(names):
                if name.endswith(suffixes):
                    path = os.path.join(dirpath, name)
                    yield os.path.relpath(path, repo), path
