/// A named, versioned, deterministic fold over the log into its own LMDB databases.
///
/// `apply` must depend only on the event and the projection's own state: no clock reads,
/// no I/O outside the ``ProjectionStore``. An event it cannot apply must throw; the
/// engine then stops and names the seq — nothing is skipped silently.
public protocol Projection: Sendable {
    /// Unique name, e.g. `today`.
    var name: String { get }
    /// Bump when the fold changes; a stored projection of another version is rebuilt.
    var version: UInt32 { get }
    /// Its logical databases; ``ProjectionStore`` methods take an index into this list.
    var databases: [String] { get }
    /// Its posting families (pointer lists; see `ProjectionStore+Postings.swift`), in
    /// ``ProjectionStore/post(_:_:at:seq:)``'s family order. None by default.
    var postings: [String] { get }
    /// The relative CPU its fold costs per event (1 for the cheapest): a rebuild splits
    /// projections across cores by it. Measured on the benchmark fixture; a hint only.
    var foldCost: Int { get }
    /// Folds one event into the store.
    func apply(_ event: Event, to store: ProjectionStore) throws
    /// Folds one event read in place (rebuild, catch-up, a query's tail): must leave the
    /// same state as ``apply(_:to:)``. `decode` gives the decoded event, decoded at most
    /// once for all the projections; the default decodes and calls ``apply(_:to:)``.
    func apply(_ view: EventView, to store: ProjectionStore, decode: () throws -> Event) throws
}

extension Projection {
    public var postings: [String] { [] }
    public var foldCost: Int { 1 }

    public func apply(_ view: EventView, to store: ProjectionStore, decode: () throws -> Event) throws {
        try apply(try decode(), to: store)
    }
}
