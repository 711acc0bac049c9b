"""Locate Core Data SQLite stores in the fixture trees and open safe copies.

A store is copied (with its -wal / -shm siblings) into a scratch folder before it
is opened, so the fixtures are never modified.
"""
import hashlib
import os
import shutil
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))
ROOTS = [os.environ.get("FIXTURES", os.path.join(HERE, "..", "Fixtures"))]
SCRATCH = os.environ.get("SCRATCH", os.path.join(os.environ.get("TMPDIR", "/tmp"), "coredata-format-scratch"))


def _is_sqlite(path):
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def find_stores(roots=ROOTS):
    """Return a list of (label, path) of SQLite files that contain Z_PRIMARYKEY or
    Z_METADATA, deduplicated by content (first root wins)."""
    seen = {}
    out = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            if "/_inspection" in dirpath or "/scratch" in dirpath:
                continue
            for fn in sorted(filenames):
                if fn.endswith(("-wal", "-shm", "-journal")):
                    continue
                p = os.path.join(dirpath, fn)
                if not _is_sqlite(p):
                    continue
                h = hashlib.sha1()
                for suffix in ("", "-wal"):
                    if os.path.exists(p + suffix):
                        with open(p + suffix, "rb") as f:
                            h.update(f.read())
                digest = h.hexdigest()
                if digest in seen:
                    continue
                seen[digest] = p
                label = os.path.relpath(p, root)
                out.append((label, p))
    return out


def open_copy(path):
    """Copy the store (and -wal/-shm) to a fresh scratch dir and open it.
    Returns a sqlite3.Connection. The copy lets SQLite read the WAL normally."""
    d = os.path.join(SCRATCH, hashlib.sha1(path.encode()).hexdigest()[:16])
    os.makedirs(d, exist_ok=True)
    dst = os.path.join(d, "store.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(dst + suffix):
            os.remove(dst + suffix)
        if os.path.exists(path + suffix):
            shutil.copyfile(path + suffix, dst + suffix)
    return sqlite3.connect(dst)


if __name__ == "__main__":
    for label, p in find_stores():
        print(label, "->", p)
