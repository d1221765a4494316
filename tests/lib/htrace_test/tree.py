"""Digests of a directory tree, for "the tool left its input alone" and "these two outputs are
byte-identical". Three questions, three functions:

  tree_state(path)         everything at path: each file's sha256 and each directory by relative
                           name; None when path does not exist (a file: its own sha256)
  file_digests(path, ...)  each regular file's sha256 by relative name; directories do not count;
                           skip_anchors leaves out the .otf2 anchors (they hold a random trace id)
  tree_hash(path)          one sha256 over the files' paths and contents; symbolic links count by
                           their name only (a salvaged archive may hold dangling ones)"""
import hashlib
import os


def _sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def tree_state(path):
    if not os.path.lexists(path):
        return None
    if os.path.isfile(path):
        return _sha256_file(path)
    out = {}
    for root, dirs, files in os.walk(path):
        for d in dirs:
            out[os.path.relpath(os.path.join(root, d), path) + "/"] = "dir"
        for f in files:
            full = os.path.join(root, f)
            out[os.path.relpath(full, path)] = _sha256_file(full)
    return out


def file_digests(path, skip_anchors):
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            if skip_anchors and f.endswith(".otf2"):
                continue
            full = os.path.join(root, f)
            out[os.path.relpath(full, path)] = _sha256_file(full)
    return out


def tree_hash(path):
    h = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(path)):
        dirs.sort()
        for name in sorted(files):
            p = os.path.join(root, name)
            h.update(p.encode())
            if not os.path.islink(p):
                with open(p, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()
