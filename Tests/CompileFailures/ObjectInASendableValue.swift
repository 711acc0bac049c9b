import OpenCoreData

struct Envelope: Sendable {
    var note: Note // error: stored property 'note' of 'Sendable'-conforming struct 'Envelope' has non-Sendable type 'Note'
}
