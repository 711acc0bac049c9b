import CSQLite
import Foundation
import OpenCoreData
import OpenCoreDataCore
import OpenCoreDataSQLite

/// A store copied off a device, damaged or crafted: a fixture store (Core Data's own files),
/// changed by the input, then inspected, its model read from its cache, and every object of every
/// entity fetched, counted and read (what `ocd inspect` and `ocd dump` do); then opened for
/// writing with history on, an object of every entity inserted, changed and deleted, saved, and
/// the history read back (`exerciseWrites`).
///
/// Input: a byte choosing the fixture, a byte choosing the mode, then the changes —
/// 0: values written into the tables (any table, column and row: the metadata plist, the model
/// cache, `Z_PRIMARYKEY`, the entity tables), as NULL, integers, reals, text, blobs or DEFLATE'd
/// blobs; 1: bytes patched into the file; 2: values written in WAL mode and left in the `-wal`
/// file, whose bytes are then patched.
struct StoreTarget: FuzzTarget {
    let fixtures: [(url: URL, bytes: Data)]

    init() {
        let root = repositoryRoot.appendingPathComponent("Tests/Fixtures")
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.fileSizeKey])?.compactMap { $0 as? URL } ?? []
        fixtures = files.filter { $0.pathExtension == "sqlite" && ((try? $0.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? nil ?? .max) < 400_000 }
            .sorted { $0.path < $1.path }
            .compactMap { url in (try? Data(contentsOf: url)).map { (url, $0) } }
        guard !fixtures.isEmpty else { fail("no fixture stores under \(root.path); run Fuzz/run from the repository") }
    }

    func run(_ input: Data) throws {
        var reader = InputReader(input)
        let fixture = fixtures[Int(reader.byte()) % fixtures.count]
        let mode = reader.byte() % 3
        let url = scratch.appendingPathComponent("store.sqlite")
        removeStore(at: url)
        defer { removeStore(at: url) }
        // Written from memory, retried: libFuzzer's timer signals interrupt file copies (EINTR),
        // which Foundation's copyItem does not retry.
        var written = false
        for _ in 0..<5 where !written { written = (try? fixture.bytes.write(to: url)) != nil }
        guard written else { fail("the harness could not write a copy of \(fixture.url.path)") }
        switch mode {
        case 0:
            edit(url, &reader, walCopy: nil)
            try read(url, variant: input.last ?? 0)
        case 1:
            patch(url, &reader)
            try read(url, variant: input.last ?? 0)
        default:
            // The copy is taken while the writer is open, as a crash would leave it: the changes
            // are in its -wal file, not yet in the database file.
            let copy = scratch.appendingPathComponent("crashed.sqlite")
            removeStore(at: copy)
            defer { removeStore(at: copy) }
            edit(url, &reader, walCopy: copy)
            patch(URL(fileURLWithPath: copy.path + "-wal"), &reader)
            try read(copy, variant: input.last ?? 0)
        }
    }

    /// What the inspect and dump commands do, through the public API; then what an app does.
    private func read(_ url: URL, variant: UInt8) throws {
        try inspect(url)
        let model = try ManagedObjectModel(cachedInStoreAt: url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url, options: [NSPersistentHistoryTrackingKey: true])
        defer { try? coordinator.remove(store) }
        try exerciseWrites(coordinator, model: model, variant: variant, checked: isIntact(url))
    }

    /// What the inspect and dump commands do, through the public API.
    private func inspect(_ url: URL) throws {
        // On a file SQLite itself finds damaged, a table scan and a count may walk different
        // b-trees and disagree: the agreement is checked on intact files only.
        let intact = isIntact(url)
        _ = try StoreInspection(storeAt: url)
        _ = try PersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: url)
        let model = try ManagedObjectModel(cachedInStoreAt: url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url, options: [NSReadOnlyPersistentStoreOption: true])
        defer { try? coordinator.remove(store) }
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait { () throws in
            for entity in model.entities {
                let request = FetchRequest<ManagedObject>(entityName: entity.name)
                let objects = try context.fetch(request)
                let counted = try context.count(for: request)
                guard counted == objects.count || !intact else { fail("fetch found \(objects.count) \(entity.name) objects and count(for:) \(counted)") }
                for object in objects.prefix(100) {
                    for property in entity.allProperties { _ = object.value(forKey: property.name) }
                }
            }
        }
    }

    /// Writes input-chosen values into input-chosen cells (at most 8), through plain SQLite.
    /// With `walCopy`, the changes are made in WAL mode without checkpoints and the database
    /// and its -wal file are copied there before the connection closes.
    private func edit(_ url: URL, _ reader: inout InputReader, walCopy: URL?) {
        var db: OpaquePointer?
        guard sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { sqlite3_close_v2(db); return }
        defer { sqlite3_close_v2(db) }
        if let walCopy {
            sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0", nil, nil, nil)
            defer {
                for suffix in ["", "-wal"] {
                if let bytes = try? Data(contentsOf: URL(fileURLWithPath: url.path + suffix)) { try? bytes.write(to: URL(fileURLWithPath: walCopy.path + suffix)) }
            }
            }
            applyEdits(db, &reader)
        } else {
            applyEdits(db, &reader)
        }
    }

    private func applyEdits(_ db: OpaquePointer?, _ reader: inout InputReader) {
        let tables = column(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        guard !tables.isEmpty else { return }
        for _ in 0..<8 where !reader.isAtEnd {
            let table = tables[Int(reader.byte()) % tables.count]
            let quotedTable = "\"" + table.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            let columns = column(db, "SELECT name FROM pragma_table_info('\(table.replacingOccurrences(of: "'", with: "''"))')")
            let rows = column(db, "SELECT rowid FROM \(quotedTable) ORDER BY rowid LIMIT 64")
            guard !columns.isEmpty, !rows.isEmpty else { continue }
            let name = columns[Int(reader.byte()) % columns.count]
            let row = rows[Int(reader.byte()) % rows.count]
            var statement: OpaquePointer?
            let sql = "UPDATE \(quotedTable) SET \"\(name.replacingOccurrences(of: "\"", with: "\"\""))\" = ? WHERE rowid = \(Int64(row) ?? 0)"
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { sqlite3_finalize(statement); continue }
            let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
            switch reader.byte() % 6 {
            case 0: sqlite3_bind_null(statement, 1)
            case 1: sqlite3_bind_int64(statement, 1, Int64(bitPattern: reader.bytes(8).reduce(0) { $0 << 8 | UInt64($1) }))
            case 2: sqlite3_bind_double(statement, 1, Double(bitPattern: reader.bytes(8).reduce(0) { $0 << 8 | UInt64($1) }))
            case 3: sqlite3_bind_text(statement, 1, String(decoding: reader.bytes(Int(reader.byte())), as: UTF8.self), -1, transient)
            case 4:
                let bytes = reader.bytes(Int(reader.byte()) * 4)
                sqlite3_bind_blob(statement, 1, bytes, Int32(bytes.count), transient)
            default:
                let bytes = (try? SQLiteModelCache.deflate(Data(reader.bytes(Int(reader.byte()) * 4)))) ?? Data()
                _ = bytes.withUnsafeBytes { sqlite3_bind_blob(statement, 1, $0.baseAddress, Int32($0.count), transient) }
            }
            sqlite3_step(statement)
            sqlite3_finalize(statement)
        }
    }

    /// Patches input-chosen bytes of a file: (3-byte offset, value) pairs, at most 64.
    private func patch(_ url: URL, _ reader: inout InputReader) {
        guard var bytes = try? [UInt8](Data(contentsOf: url)), !bytes.isEmpty else { return }
        for _ in 0..<64 where !reader.isAtEnd {
            let offset = reader.bytes(3).reduce(0) { $0 << 8 | Int($1) } % bytes.count
            bytes[offset] = reader.byte()
        }
        try? Data(bytes).write(to: url)
    }

    /// Whether `PRAGMA quick_check` finds the file sound.
    private func isIntact(_ url: URL) -> Bool {
        var db: OpaquePointer?
        defer { sqlite3_close_v2(db) }
        guard sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return false }
        return column(db, "PRAGMA quick_check") == ["ok"]
    }

    private func column(_ db: OpaquePointer?, _ sql: String) -> [String] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { sqlite3_finalize(statement); return [] }
        defer { sqlite3_finalize(statement) }
        var values: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW { values.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "") }
        return values
    }
}
