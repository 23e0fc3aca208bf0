import Foundation

/// Open-file-description byte-range locks (Linux `F_OFD_SETLK`/`F_OFD_GETLK`) on one
/// descriptor: they belong to the descriptor, not the process, so they conflict between two
/// descriptors of one process too, and closing another descriptor of the file drops none of
/// them (a classic POSIX lock would be dropped). Offsets far past a file's end are free to
/// use as names: no byte of data is locked.
public struct RangeLock: Sendable {
    /// The descriptor the locks are taken on (opened for writing to take write locks).
    public let fd: Int32

    public init(fd: Int32) { self.fd = fd }

    #if os(Linux)
    // Linux's values (fcntl-linux.h), which Glibc's module does not export.
    private static let get: Int32 = 36, set: Int32 = 37
    #endif

    /// Takes a lock on `length` bytes from `start` (shared when `shared`), without waiting.
    /// - returns: false when another descriptor holds a conflicting lock, or the system has
    ///   no OFD locks.
    @discardableResult
    public func lock(_ start: Int64, length: Int64 = 1, shared: Bool) -> Bool {
        apply(Self.setCommand, start, length, type: shared ? F_RDLCK : F_WRLCK)
    }

    /// Releases this descriptor's lock on the range.
    public func unlock(_ start: Int64, length: Int64 = 1) {
        _ = apply(Self.setCommand, start, length, type: F_UNLCK)
    }

    /// Whether another descriptor holds any lock on a byte of the range (false when the
    /// system cannot tell).
    public func isHeldElsewhere(_ start: Int64, length: Int64) -> Bool {
        guard length > 0 else { return false }  // fcntl reads a length of 0 as "to the end"
        #if os(Linux)
        var l = Self.range(start, length, type: F_WRLCK)
        guard fcntl(fd, Self.get, &l) == 0 else { return false }
        return l.l_type != Int16(F_UNLCK)
        #else
        return false
        #endif
    }

    private static var setCommand: Int32 {
        #if os(Linux)
        set
        #else
        -1
        #endif
    }

    private func apply(_ command: Int32, _ start: Int64, _ length: Int64, type: Int32) -> Bool {
        guard length > 0 else { return false }
        #if os(Linux)
        var l = Self.range(start, length, type: type)
        return fcntl(fd, command, &l) == 0
        #else
        return false
        #endif
    }

    /// The `flock` of `length` bytes from `start` (OFD locks need `l_pid` 0, as `flock()` sets it).
    private static func range(_ start: Int64, _ length: Int64, type: Int32) -> flock {
        var l = flock()
        l.l_type = Int16(type)
        l.l_whence = Int16(SEEK_SET)
        l.l_start = off_t(start)
        l.l_len = off_t(length)
        return l
    }
}
