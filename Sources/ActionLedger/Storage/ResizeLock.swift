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
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    func exclusive<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
