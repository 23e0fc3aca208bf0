import CLMDB

/// How ``Transaction/put(_:key:value:flags:)`` stores an entry; empty (the default) stores
/// or replaces it.
public struct PutFlags: OptionSet, Sendable {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The key sorts after every key in the database, so LMDB writes it at the tree's right
    /// edge without a search (`MDB_APPEND`). A key that does not is refused with
    /// ``LMDBError/keyExists``.
    public static let append = PutFlags(rawValue: UInt32(MDB_APPEND))

    /// An existing key is refused with ``LMDBError/keyExists`` instead of being replaced
    /// (`MDB_NOOVERWRITE`).
    public static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))
}
