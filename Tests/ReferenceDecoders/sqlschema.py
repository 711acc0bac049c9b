"""Derive the SQLite schema that Core Data's NSSQLiteStore uses for a decoded model,
and read the actual schema of a store, so that the two can be compared.

Rules implemented here (each one was checked against the fixture stores, see
docs/CoreDataFormat.md):

* Entity numbers (Z_ENT, Z_PRIMARYKEY): depth-first pre-order over the inheritance
  forest; root entities, and the sub-entities of each entity, visited in
  case-insensitive name order; numbering starts at 1.  Z_SUPER = parent's Z_ENT or 0.
* One table per root entity: "Z" + upper(root name).  Sub-entities share the root's
  table (single-table inheritance); Z_ENT in each row tells the concrete entity.
* Fixed columns: Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER.
* Each non-transient attribute (derived ones included): "Z" + upper(name).
* Each to-one relationship: "Z" + upper(name) INTEGER (the destination's Z_PK); plus
  "Z<destination Z_ENT>_" + upper(name) INTEGER when the destination entity has
  sub-entities (it holds the destination row's Z_ENT); plus "Z_FOK_" + upper(name)
  INTEGER when the inverse is an ordered to-many (the position in that ordering).
* A to-many whose inverse is to-one has no column on its side.
* Many-to-many: a join table (see join_tables()).
* When two properties of different entities in one table would get the same column
  name, the later one (entity order, then property order) gets a numeric suffix 1, 2, ...
"""

SQL_TYPES = {
    100: "INTEGER", 200: "INTEGER", 300: "INTEGER", 800: "INTEGER",
    400: "DECIMAL", 500: "FLOAT", 600: "FLOAT",
    700: "VARCHAR", 1200: "VARCHAR",
    900: "TIMESTAMP",
    1000: "BLOB", 1100: "BLOB", 1800: "BLOB", 2200: "BLOB",
}

HISTORY_ENTITIES = {16001: "CHANGE", 16002: "TRANSACTION", 16003: "TRANSACTIONSTRING"}


def entity_numbers(model):
    """{entity name: (Z_ENT, Z_SUPER)} computed from the model."""
    ents = {e["name"]: e for e in model["entities"]}
    roots = sorted((n for n, e in ents.items() if not e["superentity"]), key=lambda s: (s.lower(), s))
    out = {}
    counter = [0]

    def visit(n, sup):
        counter[0] += 1
        out[n] = (counter[0], out[sup][0] if sup else 0)
        for s in sorted(ents[n]["subentities"], key=lambda s: (s.lower(), s)):
            visit(s, n)

    for r in roots:
        visit(r, None)
    return out


def root_of(ents, n):
    while ents[n]["superentity"]:
        n = ents[n]["superentity"]
    return n


def _subtree(ents, n):
    """n and all descendants in Z_ENT (depth-first, case-insensitive) order."""
    out = [n]
    for s in sorted(ents[n]["subentities"], key=lambda s: (s.lower(), s)):
        out.extend(_subtree(ents, s))
    return out


def _is_many_to_many(ents, e, p):
    if p["kind"] != "relationship" or not p["toMany"] or p.get("transient"):
        return False
    inv = p.get("inverseRelationship")
    if not inv:
        return True  # to-many without inverse: stored in a join table
    dest = ents.get(p["destinationEntity"])
    if dest is None:
        return False
    invp = {x["name"]: x for x in dest["properties"] + dest["inheritedProperties"]}.get(inv)
    return invp is not None and invp["toMany"]


def _inverse(ents, p):
    dest = ents.get(p["destinationEntity"])
    if dest is None or not p.get("inverseRelationship"):
        return None
    return {x["name"]: x for x in dest["properties"] + dest["inheritedProperties"]}.get(p["inverseRelationship"])


def predict_tables(model):
    """{table: [(column, sqltype, origin)]} for the entity tables (column set; order is
    the best current hypothesis, see column_order_key)."""
    ents = {e["name"]: e for e in model["entities"]}
    nums = entity_numbers(model)
    tables = {}
    for r in sorted(n for n, e in ents.items() if not e["superentity"]):
        cols = [("Z_PK", "INTEGER", "pk"), ("Z_ENT", "INTEGER", "ent"), ("Z_OPT", "INTEGER", "opt")]
        used = {c[0] for c in cols}

        def add(name, typ, origin):
            base = name
            k = 0
            while name in used:
                k += 1
                name = "%s%d" % (base, k)
            used.add(name)
            cols.append((name, typ, origin))

        for en in _subtree(ents, r):
            e = ents[en]
            props = sorted(e["properties"], key=lambda p: p["name"])
            for p in props:
                if p.get("transient"):
                    continue
                if p["kind"] in ("attribute", "derivedAttribute"):
                    t = SQL_TYPES.get(p["attributeType"], "?%s" % p["attributeType"])
                    add("Z" + p["name"].upper(), t, "%s.%s attribute %s" % (en, p["name"], p["attributeTypeName"]))
            for p in props:
                if p.get("transient") or p["kind"] != "relationship" or p["toMany"]:
                    continue
                add("Z" + p["name"].upper(), "INTEGER", "%s.%s to-one" % (en, p["name"]))
                dest = ents.get(p["destinationEntity"])
                if dest is not None and dest["subentities"]:
                    add("Z%d_%s" % (nums[dest["name"]][0], p["name"].upper()), "INTEGER",
                        "%s.%s destination entity number" % (en, p["name"]))
                inv = _inverse(ents, p)
                if inv is not None and inv["toMany"] and inv.get("ordered"):
                    add("Z_FOK_" + p["name"].upper(), "INTEGER", "%s.%s order in %s.%s" % (
                        en, p["name"], p["destinationEntity"], inv["name"]))
        tables["Z" + r.upper()] = cols
    tables.update(join_tables(model))
    return tables


def join_tables(model):
    """Many-to-many join tables.

    For a pair R1 (on entity E1) <-> R2 (on entity E2), both to-many:
      table   Z_<E1 ent><UPPER(R1)>
      columns Z_<E1 ent><UPPER(R2)>  (E1 row's Z_PK)   -- named after the relationship pointing at E1
              Z_<E2 ent><UPPER(R1)>  (E2 row's Z_PK)
              Z_FOK_<E2 ent><UPPER(R1)> when R1 is ordered, Z_FOK_<E1 ent><UPPER(R2)> when R2 is
    R1 is the relationship of the entity with the lower Z_ENT; for a reflexive pair
    (E1 == E2) the relationship whose name sorts later (hypothesis, 2 of 2 verifiable cases).
    """
    ents = {e["name"]: e for e in model["entities"]}
    nums = entity_numbers(model)
    out = {}
    done = set()
    for e in model["entities"]:
        for p in e["properties"]:
            if not _is_many_to_many(ents, e, p):
                continue
            inv = _inverse(ents, p)
            a = (e["name"], p["name"])
            b = (p["destinationEntity"], inv["name"]) if inv else None
            key = frozenset([a, b]) if b else frozenset([a])
            if key in done:
                continue
            done.add(key)
            if inv is None:
                e1, r1 = e["name"], p
                tname = "Z_%d%s" % (nums[e1][0], r1["name"].upper())
                out[tname] = [("Z_%d%s" % (nums[e1][0], "?"), "INTEGER", "no-inverse (unverified)")]
                continue
            # inverse may be declared on a super-entity; the owner is where it is declared
            e2name = p["destinationEntity"]
            sides = [(e["name"], p), (e2name, inv)]
            n1, n2 = nums[sides[0][0]][0], nums[sides[1][0]][0]
            if n1 != n2:
                sides.sort(key=lambda s: nums[s[0]][0])
            else:
                sides.sort(key=lambda s: s[1]["name"].lower(), reverse=True)
            (E1, R1), (E2, R2) = sides
            t = "Z_%d%s" % (nums[E1][0], R1["name"].upper())
            cols = [("Z_%d%s" % (nums[E1][0], R2["name"].upper()), "INTEGER", "%s row (via %s.%s)" % (E1, E2, R2["name"])),
                    ("Z_%d%s" % (nums[E2][0], R1["name"].upper()), "INTEGER", "%s row (via %s.%s)" % (E2, E1, R1["name"]))]
            if R2.get("ordered"):
                cols.append(("Z_FOK_%d%s" % (nums[E1][0], R2["name"].upper()), "INTEGER", "order of %s.%s" % (E2, R2["name"])))
            if R1.get("ordered"):
                cols.append(("Z_FOK_%d%s" % (nums[E2][0], R1["name"].upper()), "INTEGER", "order of %s.%s" % (E1, R1["name"])))
            out[t] = cols
    return out


def actual_tables(con):
    out = {}
    for (t,) in con.execute("select name from sqlite_master where type='table' order by name"):
        out[t] = [(r[1], (r[2] or "").upper()) for r in con.execute('pragma table_info("%s")' % t)]
    return out


def actual_indexes(con):
    return [(r[0], r[1], r[2]) for r in con.execute(
        "select name, tbl_name, sql from sqlite_master where type='index' and sql is not null order by name")]


# ---------------------------------------------------------------- column order

# Column groups, in table order (verified on all 135 entity tables of the fixtures):
COLUMN_GROUP = {100: 0, 200: 0, 300: 0, 800: 0,   # integers, booleans (+ all relationship columns)
                900: 1, 500: 1, 600: 1,           # Date, Double, Float (interleaved by name)
                400: 2,                           # Decimal
                700: 3,                           # String
                1200: 4,                          # URI
                1100: 5,                          # UUID
                1800: 6, 2200: 6,                 # Transformable
                1000: 7}                          # Binary


def column_sort_key(model, nums):
    ents = {e["name"]: e for e in model["entities"]}

    def key(col):
        name, typ, origin = col
        if origin in ("pk", "ent", "opt"):
            return (-1, ("pk", "ent", "opt").index(origin))
        ent, rest = origin.split(".", 1)
        prop = rest.split(" ")[0]
        n = nums[ent][0]
        if " attribute " in origin:
            p = {x["name"]: x for x in ents[ent]["properties"]}[prop]
            return (COLUMN_GROUP.get(p["attributeType"], 9), n, 0, prop, 0)
        if origin.endswith("to-one"):
            return (0, n, 1, prop, 0)
        if "destination entity number" in origin:
            return (0, n, 1, prop, 1)
        return (0, n, 2, prop, 0)  # Z_FOK_ order column
    return key


def predict_tables_ordered(model):
    nums = entity_numbers(model)
    key = column_sort_key(model, nums)
    out = {}
    for t, cols in predict_tables(model).items():
        if t.startswith("Z_"):
            out[t] = cols  # join tables: already in table order
        else:
            out[t] = sorted(cols, key=key)
    return out


# ---------------------------------------------------------------- indexes (modern style)

def predict_indexes(model):
    """{index name: (table, unique, [columns])} for the index kinds seen in stores
    written by framework versions >= ~1044 (see docs/CoreDataFormat.md for the older style)."""
    ents = {e["name"]: e for e in model["entities"]}
    tables = predict_tables(model)
    out = {}
    colmap = {}
    for t, cols in tables.items():
        for c, _, origin in cols:
            colmap[(t, origin)] = c
    for e in model["entities"]:
        t = "Z" + root_of(ents, e["name"]).upper()
        cols = {c for c, _, _ in tables[t]}
        if not e["superentity"] and e["subentities"]:
            out["%s_Z_ENT_INDEX" % t] = (t, False, ["Z_ENT"])
        for p in e["properties"]:
            if p["kind"] == "relationship" and not p["toMany"] and not p.get("transient"):
                c = colmap[(t, "%s.%s to-one" % (e["name"], p["name"]))]
                out["%s_%s_INDEX" % (t, c)] = (t, False, [c])
        for uc in e.get("uniquenessConstraints") or []:
            out["Z_%s_UNIQUE_%s" % (e["name"], "_".join(uc))] = (t, True, ["Z" + n.upper() for n in uc])
        props = {x["name"]: x for x in e["properties"] + e["inheritedProperties"]}
        for fi in e.get("fetchIndexes") or []:
            names = [el["property"] for el in fi["elements"]]
            # a single-element fetch index on a to-one relationship is not materialised (the
            # automatic FK index covers it); elements that are not columns (to-many) skip it
            if any(n is None or n not in props for n in names):
                continue
            if len(names) == 1 and props[names[0]]["kind"] == "relationship":
                continue
            if any(props[n]["kind"] == "relationship" and props[n]["toMany"] for n in names):
                continue
            cs = ["Z" + n.upper() for n in names]
            if cs and all(c in cols for c in cs):
                out["Z_%s_%s" % (e["name"], fi["name"])] = (t, False, cs)
    for t, cols in tables.items():
        if t.startswith("Z_") and len(cols) >= 2:
            out["%s_%s_INDEX" % (t, cols[1][0])] = (t, False, [cols[1][0], cols[0][0]])
    return out
