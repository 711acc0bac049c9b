#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target from the repository's fixtures.

    Fuzz/seeds.py OUT      one folder per target under OUT

Seeds are made, not committed: they come from Tests/Fixtures (Core Data's own files) and from
Fuzz/predicates.txt, so they follow the fixtures.
"""
import json, os, plistlib, sqlite3, sys, uuid, zlib

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
fixtures = os.path.join(root, "Tests", "Fixtures")
out = sys.argv[1]


def files(suffix=None, name=None):
    for folder, _, names in sorted(os.walk(fixtures)):
        for n in sorted(names):
            if (suffix and n.endswith(suffix)) or (name and n == name):
                yield os.path.join(folder, n)


def seed(target, label, data):
    folder = os.path.join(out, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, label), "wb") as f:
        f.write(data)


stores = [p for p in files(suffix=".sqlite") if os.path.getsize(p) < 400_000]
for index, path in enumerate(files(suffix=".mom")):
    data = open(path, "rb").read()
    seed("archive", f"mom-{index}", data)
    seed("plist", f"mom-{index}", data)
# Compiled mapping models are keyed archives too: the archive target reads each input both ways.
for index, path in enumerate(files(suffix=".cdm")):
    seed("archive", f"cdm-{index}", open(path, "rb").read())
for index, path in enumerate(stores):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        (plist,) = db.execute("SELECT Z_PLIST FROM Z_METADATA").fetchone()
        if plist:
            seed("plist", f"metadata-{index}", plist)
        row = db.execute("SELECT Z_CONTENT FROM Z_MODELCACHE").fetchone() if db.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'Z_MODELCACHE'").fetchone() else None
        if row and row[0]:
            seed("archive", f"cache-{index}", zlib.decompress(row[0], -15))
    finally:
        db.close()
    # The store target's input: fixture, mode, then changes (see StoreTarget.swift).
    for mode in range(3):
        seed("store", f"store-{index}-{mode}", bytes([index, mode]) + bytes(range(1, 40)))
for index, path in enumerate(files(name="contents")):
    seed("xml-model", f"model-{index}", open(path, "rb").read())
for index, path in enumerate(files(name="xcmapping.xml")):
    seed("xml-mapping", f"mapping-{index}", open(path, "rb").read())
with open(os.path.join(root, "Fuzz", "predicates.txt"), encoding="utf-8") as f:
    for index, line in enumerate(l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")):
        arguments = line.count("%@") + line.count("%d") + line.count("%K")
        seed("predicate", f"predicate-{index}", bytes([arguments]) + line.encode())
token = {"storeIdentifier": "6C8B9C3E-1F0A-4E43-9D0B-0D5E2C1A7A11", "transactionNumber": 3}
seed("history-token", "json", json.dumps(token).encode())

# A token of several stores (the coordinator's current token when several stores record history).
token = dict(token, otherStores={"0E1B3C55-7A2D-4F19-8C44-2B6A9E0D3F70": 7, "A1": -1})
seed("history-token", "json-stores", json.dumps(token).encode())


# The transformable target: keyed archives of every kind NSSecureUnarchiveFromData allows, as
# NSKeyedArchiver writes them, and the archived values stored in the fixture stores.
def keyed_archive(objects):
    return plistlib.dumps({"$archiver": "NSKeyedArchiver", "$version": 100000, "$top": {"root": plistlib.UID(1)},
                           "$objects": ["$null"] + objects}, fmt=plistlib.FMT_BINARY)


def class_info(name, *supers):
    return {"$classname": name, "$classes": [name, *supers, "NSObject"]}


UID = plistlib.UID
archives = {
    "string": ["héllo"], "integer": [42], "big": [2**64 - 1], "real": [1.5], "bool": [True], "data": [b"\x00\x01"],
    "date": [{"$class": UID(2), "NS.time": 5.0}, class_info("NSDate")],
    "uuid": [{"$class": UID(2), "NS.uuidbytes": uuid.UUID(int=7).bytes}, class_info("NSUUID")],
    "url": [{"$class": UID(3), "NS.base": UID(0), "NS.relative": UID(2)}, "https://example.org/a", class_info("NSURL")],
    "null": [{"$class": UID(2)}, class_info("NSNull")],
    "mutable-string": [{"$class": UID(2), "NS.string": "text"}, class_info("NSMutableString", "NSString")],
    "mutable-data": [{"$class": UID(2), "NS.data": b"bytes"}, class_info("NSMutableData", "NSData")],
    "array": [{"$class": UID(4), "NS.objects": [UID(2), UID(3)]}, "a", 1, class_info("NSArray")],
    "set": [{"$class": UID(4), "NS.objects": [UID(2), UID(3)]}, "x", "y", class_info("NSSet")],
    "dictionary": [{"$class": UID(6), "NS.keys": [UID(2), UID(3)], "NS.objects": [UID(4), UID(5)]}, "k", "j", "v", 7,
                   class_info("NSDictionary")],
    "nested": [{"$class": UID(3), "NS.objects": [UID(2), UID(2)]}, {"$class": UID(4), "NS.keys": [UID(5)], "NS.objects": [UID(6)]},
               class_info("NSMutableArray", "NSArray"), class_info("NSDictionary"), "key", 2.5],
}
for label, objects in archives.items():
    seed("transformable", label, keyed_archive(objects))
for index, path in enumerate(stores):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z%' AND name NOT LIKE 'Z\\_%' ESCAPE '\\'"):
            columns = [row[1] for row in db.execute(f'PRAGMA table_info("{table}")')]
            for column in columns:
                row = db.execute(f'SELECT "{column}" FROM "{table}" WHERE typeof("{column}") = \'blob\' AND substr("{column}", 1, 8) = CAST(\'bplist00\' AS BLOB) LIMIT 1').fetchone()
                if row:
                    seed("transformable", f"store-{index}-{table}-{column}", row[0])
    finally:
        db.close()
