"""Decode every compiled model and every store's Z_MODELCACHE / Z_METADATA in the
fixtures (Tests/Fixtures) and write one JSON file per source into Tests/Fixtures/Decoded/,
or into the folder given as the first argument (model description plus
computed entity and property version hashes, and, for stores, the metadata and the
predicted SQLite schema)."""
import base64, glob, json, os, plistlib, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import momdecode, versionhash, sqlschema, stores

FIXTURES = stores.ROOTS[0]
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(FIXTURES, "Decoded")
os.makedirs(OUT, exist_ok=True)


def enrich(model):
    eh = versionhash.entity_hashes(model)
    for e in model["entities"]:
        e["versionHash"] = eh[e["name"]].hex()
        for p in e["properties"] + e["inheritedProperties"]:
            p["versionHash"] = versionhash.property_hash(p).hex()
    nums = sqlschema.entity_numbers(model)
    model["entityNumbers"] = {n: {"Z_ENT": a, "Z_SUPER": b} for n, (a, b) in nums.items()}
    model["sqlTables"] = {t: [[c, ty, o] for c, ty, o in cols] for t, cols in sqlschema.predict_tables_ordered(model).items()}
    model["sqlIndexes"] = {k: list(v) for k, v in sqlschema.predict_indexes(model).items()}
    return model


def safe(label):
    return label.replace("/", "__").replace(" ", "_")


n = 0
for mom in sorted(glob.glob(FIXTURES + "/**/*.mom", recursive=True)):
    m = enrich(momdecode.load(mom))
    m["file"] = "fixtures/" + os.path.relpath(mom, FIXTURES)
    json.dump(m, open(os.path.join(OUT, safe(os.path.relpath(mom, FIXTURES + "")) + ".json"), "w"), indent=1, default=str)
    n += 1
for label, p in stores.find_stores():
    con = stores.open_copy(p)
    rec = {"store": label, "file": "fixtures/" + os.path.relpath(p, FIXTURES)}
    row = con.execute("select Z_VERSION, Z_UUID, Z_PLIST from Z_METADATA").fetchone()
    if row:
        rec["Z_VERSION"], rec["Z_UUID"] = row[0], row[1]
        if row[2] is not None:
            md = plistlib.loads(row[2])
            rec["metadata"] = {k: ({h: x.hex() for h, x in v.items()} if k == "NSStoreModelVersionHashes" else
                                   (base64.b64encode(v).decode() if isinstance(v, bytes) else v)) for k, v in md.items()}
    rec["Z_PRIMARYKEY"] = con.execute("select Z_ENT, Z_NAME, Z_SUPER, Z_MAX from Z_PRIMARYKEY order by Z_ENT").fetchall()
    try:
        data, why = momdecode.load_archive_from_store(p)
    except Exception as ex:  # noqa: BLE001
        data, why = None, repr(ex)
    rec["modelcache"] = why
    if data is not None:
        rec["model"] = enrich(momdecode.decode_archive_bytes(data))
    json.dump(rec, open(os.path.join(OUT, safe(label) + ".json"), "w"), indent=1, default=str)
    n += 1
print("wrote %d files to %s" % (n, OUT))
