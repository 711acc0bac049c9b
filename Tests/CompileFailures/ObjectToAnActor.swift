import OpenCoreData

func send(_ note: Note, to indexer: Indexer) async {
    await indexer.index(note) // error: sending 'note' risks causing data races
}
