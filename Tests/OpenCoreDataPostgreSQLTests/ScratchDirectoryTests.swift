import Foundation
@testable import OpenCoreDataPostgreSQL
import Testing
import TestSupport

/// A PostgreSQL migration's scratch copy of every row is for its owner's eyes only, and one that
/// a killed migration left behind goes at the next migration.
@Suite(.dedicatedThread) struct ScratchDirectoryTests {
    @Test func theScratchFolderIsTheOwnersAlone() throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("scratch-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: parent) }
        // (The process's umask, 022 by default, would leave a folder others may read.)
        let directory = ScratchDirectory.url(in: parent)
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        try ScratchDirectory.create(directory)
        let permissions = try #require(FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? NSNumber)
        #expect(permissions.intValue & 0o777 == 0o700)
    }

    @Test func aFolderLeftByAProcessThatEndedIsRemovedAndALiveOnesKept() throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("scratch-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: parent) }
        // A process that has ended: its number names no process now.
        let ended = Process()
        ended.executableURL = URL(fileURLWithPath: "/bin/true")
        try ended.run()
        ended.waitUntilExit()
        let abandoned = parent.appendingPathComponent("\(ScratchDirectory.prefix)\(ended.processIdentifier)-\(UUID().uuidString)")
        let live = ScratchDirectory.url(in: parent)
        let unrelated = parent.appendingPathComponent("ocd-other-\(ended.processIdentifier)")
        for folder in [abandoned, live, unrelated] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }

        try ScratchDirectory.create(ScratchDirectory.url(in: parent))
        #expect(!FileManager.default.fileExists(atPath: abandoned.path))
        #expect(FileManager.default.fileExists(atPath: live.path))
        #expect(FileManager.default.fileExists(atPath: unrelated.path))
    }
}
