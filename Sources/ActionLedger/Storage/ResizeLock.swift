import Foundation

/// A readers–writer lock guarding "no transaction is open in this process".
///
/// Every transaction holds it shared for its lifetime; growing the map takes it
/// exclusively, because `mdb_env_set_mapsize` must only be called while this
/// process has no transaction open.
final class ResizeLock: @unchecked Sendable {
    // Safe: the pthread_rwlock is heap-allocated once, never moved, and only touched
    // through pthread calls, which are themselves thread-safe.
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func shared<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_rdlock(lock)
        let held = HeldLocks.ofThisThread
        held.locks.append(ObjectIdentifier(self))
        defer {
            // Shared holds nest (a read inside a read), so this one is the last taken.
            held.locks.removeLast()
            pthread_rwlock_unlock(lock)
        }
        return try body()
    }

    /// Whether the calling thread holds this lock shared: it has a transaction open on the
    /// store, so taking the lock exclusively would wait for that transaction, i.e. for ever.
    var isHeldByThisThread: Bool { HeldLocks.ofThisThread.locks.contains(ObjectIdentifier(self)) }

    func exclusive<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}

/// The resize locks the current thread holds shared, innermost last.
private final class HeldLocks {
    var locks: [ObjectIdentifier] = []

    /// One per thread, released with the thread.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        // The destructor's argument is optional in glibc's declaration, not in Darwin's.
        #if os(Linux)
        pthread_key_create(&key) { p in p.map { Unmanaged<HeldLocks>.fromOpaque($0).release() } }
        #else
        pthread_key_create(&key) { p in Unmanaged<HeldLocks>.fromOpaque(p).release() }
        #endif
        return key
    }()

    static var ofThisThread: HeldLocks {
        if let p = pthread_getspecific(key) { return Unmanaged<HeldLocks>.fromOpaque(p).takeUnretainedValue() }
        let held = HeldLocks()
        pthread_setspecific(key, Unmanaged.passRetained(held).toOpaque())
        return held
    }
}
