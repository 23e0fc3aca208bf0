import Testing
@testable import ActionLedger

/// The fold's in-memory posting lists: keys interned through an open-addressing table that
/// grows, lists kept in filing order, keys listed in LMDB's order. A byte-key map keeps
/// short keys inline and longer ones on the heap, equal either way.
@Suite struct PostingBufferTests {
    @Test func internsGrowsAndListsInKeyOrder() {
        var buffer = PostingBuffer()
        // Enough lists to grow the table several times; the empty key and a prefix pair included.
        var keys: [[UInt8]] = [[], [1], [1, 0], [1, 0, 0]]
        for i in 0..<700 { keys.append([UInt8(i % 5)] + Array("person-\(i)".utf8)) }
        for (n, key) in keys.enumerated() {
            for seq in 0..<UInt64(n % 3 + 1) {
                key.withUnsafeBytes { buffer.append($0, seq) }
            }
        }
        #expect(buffer.count == keys.enumerated().reduce(0) { $0 + $1.offset % 3 + 1 })
        let sorted = buffer.sortedKeys().map(\.key)
        #expect(sorted == keys.sorted(by: bytesPrecede))
        for (n, key) in keys.enumerated() {
            let list = key.withUnsafeBytes { buffer.postings($0) }
            #expect(list.count == (n % 3 + 1) * 8, "\(key)")
            let seqs = list.withUnsafeBytes { all in
                stride(from: 0, to: all.count, by: 8).map { Keys.readU64(UnsafeRawBufferPointer(rebasing: all[$0..<$0 + 8])) }
            }
            #expect(seqs == Array(0..<UInt64(n % 3 + 1)))
        }
        #expect([UInt8]([9, 9]).withUnsafeBytes { buffer.postings($0) }.isEmpty)
        buffer.removeAllPostings()
        #expect(buffer.isEmpty && buffer.sortedKeys().isEmpty)
        [UInt8]([1]).withUnsafeBytes { buffer.append($0, 1) }
        #expect(buffer.sortedKeys().map(\.key) == [[1]])
    }

    @Test func byteKeysCompareByContentInlineOrNot() {
        let short = Array("act-000001".utf8), long = Array(repeating: UInt8(7), count: 40)
        var map: [ByteKey: Int] = [:]
        map[ByteKey(bytes: short)] = 1
        map[ByteKey(bytes: long)] = 2
        map[ByteKey(bytes: [])] = 3
        #expect(map[short.withUnsafeBytes { ByteKey($0) }] == 1)
        #expect(map[long.withUnsafeBytes { ByteKey($0) }] == 2)
        #expect(map[ByteKey(bytes: [])] == 3)
        #expect(map[ByteKey(bytes: short + [0])] == nil)  // a trailing zero is a different key
        #expect(ByteKey(bytes: short).bytes == short && ByteKey(bytes: long).bytes == long)
    }

    /// Keys of every length a word split can meet (0 to 33 bytes, each byte distinct, some
    /// with the high bit set): held and read back byte for byte, equal only to themselves.
    @Test func shortKeysOfEveryLengthKeepTheirBytes() {
        let keys = (0...33).map { n in (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 200) } }
        for key in keys {
            #expect(ByteKey(bytes: key).bytes == key, "\(key.count) bytes")
            let id = key.withUnsafeBytes { IdKey($0) }
            if key.count <= 32 { #expect(id.inlineBytes == key, "\(key.count) bytes") }
        }
        #expect(Set(keys.map { ByteKey(bytes: $0) }).count == keys.count)
        let mixed = keys + keys.map { $0.reversed() } + [[0], [0, 0], [255], [1, 255]]
        for a in mixed {
            for b in mixed {
                #expect(ByteKey.precedes(ByteKey(bytes: a), ByteKey(bytes: b)) == bytesPrecede(a, b), "\(a) \(b)")
            }
        }
        #expect(Set(keys.map { k in k.withUnsafeBytes { IdKey($0) } }).count == keys.count)
        var buffer = PostingBuffer()
        for (i, key) in keys.enumerated() { key.withUnsafeBytes { buffer.append($0, UInt64(i)) } }
        for (i, key) in keys.enumerated() {
            #expect(key.withUnsafeBytes { buffer.postings($0) } == withUnsafeBytes(of: UInt64(i).bigEndian) { Array($0) })
        }
    }
}
