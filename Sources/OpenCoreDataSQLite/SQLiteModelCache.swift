import CZlib
import Foundation
import OpenCoreDataCore

/// Core Data's `Z_MODELCACHE`: one row whose `Z_CONTENT` is the store's model as a keyed archive
/// wrapped in raw DEFLATE (no zlib header). Stores from framework version 637 on carry it, so
/// they open without a model file.
package enum SQLiteModelCache {
    /// The archived model in the store's cache, inflated; nil when the store has no cache, an
    /// empty one, or one whose content is NULL.
    static func archive(in db: SQLiteConnection) throws -> Data? {
        guard try db.tableExists("Z_MODELCACHE") else { return nil }
        let statement = try db.cachedStatement("SELECT Z_CONTENT FROM Z_MODELCACHE")
        defer { statement.reset() }
        guard try statement.step(), !statement.isNull(at: 0) else { return nil }
        let compressed = statement.data(at: 0)
        guard !compressed.isEmpty else { return nil }
        return try inflate(compressed)
    }

    /// Whether the store carries a cached model, without inflating it.
    static func exists(in db: SQLiteConnection) throws -> Bool {
        guard try db.tableExists("Z_MODELCACHE") else { return false }
        let statement = try db.cachedStatement("SELECT length(Z_CONTENT) FROM Z_MODELCACHE WHERE Z_CONTENT IS NOT NULL")
        defer { statement.reset() }
        return try statement.step() && statement.int64(at: 0) > 0
    }

    /// The largest model an inflated cache may hold. Apple's largest models archive to a few
    /// megabytes; DEFLATE expands up to about 1,000 times, so without a cap a crafted cache of a
    /// megabyte would ask for a gigabyte.
    package static let maximumInflatedSize = 64 << 20

    /// Writes `model` into the cache (one row, replacing any), as Core Data does when it creates
    /// or migrates a store.
    static func write(_ model: ManagedObjectModel, in db: SQLiteConnection) throws {
        let content = try deflate(CompiledModelWriter.archive(model))
        try db.execute("DELETE FROM Z_MODELCACHE")
        let insert = try db.prepare("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)")
        defer { insert.finalize() }
        try insert.bind([.data(content)])
        try insert.run()
    }

    /// Compresses data as raw DEFLATE (RFC 1951, no zlib header), the cache's encoding.
    package static func deflate(_ data: Data) throws(CoreDataError) -> Data {
        var stream = z_stream()
        guard deflateInit2_(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                            Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw CoreDataError(.coreData, "zlib could not start compressing the model cache.")
        }
        defer { deflateEnd(&stream) }
        var input = [UInt8](data)
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 16)
        let status = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = uInt(target.count)
                return CZlib.deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else {
            throw CoreDataError(.coreData, "zlib could not compress the model cache (status \(status)).")
        }
        return Data(output.prefix(Int(stream.total_out)))
    }

    /// Inflates raw DEFLATE data (RFC 1951).
    static func inflate(_ data: Data) throws(CoreDataError) -> Data {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw CoreDataError(.coreData, "zlib could not start inflating the model cache.")
        }
        defer { inflateEnd(&stream) }
        var input = [UInt8](data)
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var status: Int32 = Z_OK
        var tooLarge = false
        input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while status == Z_OK {
                chunk.withUnsafeMutableBufferPointer { target in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    output.append(target.baseAddress!, count: target.count - Int(stream.avail_out))
                }
                if output.count > maximumInflatedSize { tooLarge = true; break }
                if status == Z_OK, stream.avail_in == 0, stream.avail_out != 0 { break }
            }
        }
        guard !tooLarge else {
            throw CoreDataError(.coreData, """
                The store's model cache (Z_MODELCACHE) inflates to more than \(maximumInflatedSize >> 20) MB, \
                more than any model needs; the store is damaged or crafted. Open it with the app's model file.
                """)
        }
        guard status == Z_STREAM_END else {
            throw CoreDataError(.coreData, "The store's model cache (Z_MODELCACHE) is not valid DEFLATE data (zlib status \(status)).")
        }
        return output
    }
}

extension ManagedObjectModel {
    /// The model a Core Data store carries in its `Z_MODELCACHE` table (stores written by
    /// framework version 637 and later, macOS 10.9 / iOS 7 on), so a store opens without the
    /// app's model file. Mirrors Core Data's use of the cache when no model is at hand.
    ///
    /// Throws `CoreDataError` (134060) when the store has no cache or an empty one (stores from
    /// before 2013, or whose cache was cleared): open those with their model file.
    public convenience init(cachedInStoreAt url: URL) throws {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CoreDataError(.persistentStoreOpen, "There is no store at \(url.path).")
        }
        let db = try SQLiteConnection(path: url.path, readOnly: true)
        guard let archive = try SQLiteModelCache.archive(in: db) else {
            throw CoreDataError(.coreData, """
                The store at \(url.path) carries no model (its Z_MODELCACHE is missing or empty, as in stores \
                written before Core Data 637). Open it with the app's model file: \
                ManagedObjectModel(contentsOf:) with the .xcdatamodeld or .momd.
                """)
        }
        try self.init(archive: archive)
    }
}
