/// The device records a devices fold has read or changed, held decoded until the fold
/// ends: a tap changes its device's last-seen time and count, and a device taps thousands
/// of times in a rebuild, so each record is decoded and encoded once per fold, not per tap.
/// Written back like ``TodayCache`` (``ProjectionStore/flushCache()``).
final class DevicesCache: FoldCache {
    /// Every record here was changed by the fold (one is added only by ``update``).
    private var records: [ByteKey: DeviceRecord] = [:]

    var approximateBytes: Int { records.count * 160 }

    /// Changes the record under `key` (person ‖ 0 ‖ device), read from the store the first time.
    func update(_ key: UnsafeRawBufferPointer, _ store: ProjectionStore, _ change: (inout DeviceRecord) -> Void) throws {
        let k = ByteKey(key)
        var record: DeviceRecord
        if let held = records[k] {
            record = held
        } else if let stored = try store.withStoredValue(0, key: key, { try DeviceRecord(decoding: $0) }) {
            record = stored
        } else {
            let (person, device) = Self.split(key)
            throw LedgerError(.unknownDevice, "device \(device) is not linked to \(person)")
        }
        change(&record)
        records[k] = record
    }

    func flush(into store: ProjectionStore) throws {
        for (key, record) in records {
            try store.put(0, key: key.bytes, value: record.encoded)
        }
        records.removeAll(keepingCapacity: true)
    }

    private static func split(_ key: UnsafeRawBufferPointer) -> (String, String) {
        let zero = key.firstIndex(of: 0) ?? key.endIndex
        return (String(decoding: key[..<zero], as: UTF8.self),
                String(decoding: key[min(zero + 1, key.endIndex)...], as: UTF8.self))
    }
}
