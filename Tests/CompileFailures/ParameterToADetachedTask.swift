import OpenCoreData

func send(_ note: Note) {
    Task.detached { note.title = "x" } // error: passing closure as a 'sending' parameter risks causing data races
}
