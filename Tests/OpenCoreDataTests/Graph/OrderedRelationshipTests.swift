import OpenCoreData
import Testing
import TestSupport

@Suite(.dedicatedThread) struct OrderedRelationshipTests {
    @Test(arguments: StoreKind.allCases)
    func theOrderSurvivesSavesAndReorders(kind: StoreKind) throws {
        let stack = try TestStack(kind, model: ManagedObjectModel(Playlist.self, Track.self))
        let context = stack.container.newBackgroundContext()
        let playlistID = try context.performAndWait { () throws in
            let playlist = Playlist(context: context)
            let tracks = ["c", "a", "b"].map { title in
                let track = Track(context: context)
                track.title = title
                return track
            }
            playlist.tracks = tracks
            #expect(tracks.allSatisfy { $0.playlist === playlist })
            // Joining from the to-one side appends.
            let d = Track(context: context)
            d.title = "d"
            d.playlist = playlist
            #expect(playlist.tracks.map(\.title) == ["c", "a", "b", "d"])
            try context.save()
            return playlist.objectID
        }
        let reader = stack.container.newBackgroundContext()
        try reader.performAndWait { () throws in
            let playlist = try #require(reader.object(with: playlistID) as? Playlist)
            #expect(playlist.tracks.map(\.title) == ["c", "a", "b", "d"])
            playlist.tracks = playlist.tracks.sorted { $0.title < $1.title }.filter { $0.title != "c" }
            try reader.save()
        }
        let third = stack.container.newBackgroundContext()
        try third.performAndWait { () throws in
            let playlist = try #require(third.object(with: playlistID) as? Playlist)
            #expect(playlist.tracks.map(\.title) == ["a", "b", "d"])
            let orphans = try third.fetch(FetchRequest<Track>(entityName: "Track")).filter { $0.playlist == nil }
            #expect(orphans.map(\.title) == ["c"])
        }
    }

    @Test func theStoreHoldsCoreDatasOrderColumn() throws {
        let stack = try TestStack(.sqlite, model: ManagedObjectModel(Playlist.self, Track.self))
        let context = stack.container.newBackgroundContext()
        try context.performAndWait { () throws in
            let playlist = Playlist(context: context)
            playlist.tracks = ["x", "y"].map { title in
                let track = Track(context: context)
                track.title = title
                return track
            }
            try context.save()
        }
        let db = try RawSQLite(stack.storeURL)
        let table = try db.rows("SELECT sql FROM sqlite_master WHERE name = 'ZTRACK'").first?.first as? String
        #expect(table == "CREATE TABLE ZTRACK ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZPLAYLIST INTEGER, Z_FOK_PLAYLIST INTEGER, ZTITLE VARCHAR )")
        let order = try db.rows("SELECT ZTITLE, Z_FOK_PLAYLIST FROM ZTRACK ORDER BY Z_FOK_PLAYLIST").map { "\($0[0] as? String ?? "?")=\($0[1] as? Int64 ?? -1)" }
        #expect(order == ["x=2048", "y=3072"])
    }
}
