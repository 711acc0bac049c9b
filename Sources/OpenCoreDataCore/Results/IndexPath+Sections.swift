import Foundation

#if !canImport(UIKit) && !canImport(AppKit)
/// The section-and-row form of `IndexPath` that UIKit and AppKit add on Apple platforms, for the
/// index paths of ``FetchedResultsController`` where neither exists.
extension IndexPath {
    /// An index path of an item in a section.
    public init(item: Int, section: Int) {
        self.init(indexes: [section, item])
    }

    /// An index path of a row in a section (a table's spelling of ``init(item:section:)``).
    public init(row: Int, section: Int) {
        self.init(indexes: [section, row])
    }

    /// The section: the first index.
    public var section: Int {
        get { self[0] }
        set { self[0] = newValue }
    }

    /// The item within the section: the second index.
    public var item: Int {
        get { self[1] }
        set { self[1] = newValue }
    }

    /// The row within the section: the second index (a table's spelling of ``item``).
    public var row: Int {
        get { self[1] }
        set { self[1] = newValue }
    }
}
#endif
