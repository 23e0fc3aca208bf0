/// An action id as the key of a fold's map, holding no reference, so that the map moves,
/// copies and drops it without retain or release (a rebuild does so for every event of
/// every action). Ids of up to 32 bytes are held inline; a longer one (ids reach 128
/// bytes) by its SHA-256, and whoever needs its bytes back keeps them beside the map
/// (``TodayCache`` does).
struct IdKey: Hashable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// The id's length; negative for a long id held by its hash.
    private let count: Int

    /// The key of an id given as text.
    init(_ id: String) {
        var id = id
        self = id.withUTF8 { IdKey(UnsafeRawBufferPointer($0)) }
    }

    init(_ b: UnsafeRawBufferPointer) {
        if b.count <= 32 {
            count = b.count
            words = fourWords(b)
        } else {
            count = -b.count
            let digest = Digest.sha256(b)
            withUnsafeMutableBytes(of: &words) { w in digest.withBytes { w.copyMemory(from: $0) } }
        }
    }

    /// Whether the id's bytes are held here (else only its hash).
    var isInline: Bool { count >= 0 }

    /// The bytes of an inline id.
    var inlineBytes: [UInt8] {
        precondition(isInline, "a long id is held by its hash")
        return withUnsafeBytes(of: words) { Array($0.prefix(count)) }
    }

    /// As ``ByteKey``'s: the table's seed, then the words mixed (no SipHash rounds).
    func _rawHashValue(seed: Int) -> Int {
        wordHash(seed: seed, count: count, words, wide: count > 16 || count < 0)
    }

    func hash(into h: inout Hasher) {
        h.combine(count)
        h.combine(words.0)
        h.combine(words.1)
        h.combine(words.2)
        h.combine(words.3)
    }

    static func == (a: IdKey, b: IdKey) -> Bool { a.count == b.count && a.words == b.words }
}

/// A key's hash under a hash table's seed, for keys held as four words (``ByteKey``,
/// ``IdKey``): a multiply-xorshift mix of each word, a few nanoseconds against SipHash's
/// rounds. The table's per-process random seed enters first, so a caller who picks ids
/// cannot aim them at one bucket without knowing it. `wide`: the last two words count.
@inline(__always)
func wordHash(seed: Int, count: Int, _ words: (UInt64, UInt64, UInt64, UInt64), wide: Bool) -> Int {
    @inline(__always) func mix(_ h: UInt64, _ w: UInt64) -> UInt64 {
        let m = (h ^ w) &* 0x9E37_79B9_7F4A_7C15
        return m ^ (m >> 29)
    }
    var h = mix(UInt64(bitPattern: Int64(seed)) ^ 0x243F_6A88_85A3_08D3, UInt64(bitPattern: Int64(count)))
    h = mix(h, words.0)
    h = mix(h, words.1)
    if wide {
        h = mix(h, words.2)
        h = mix(h, words.3)
    }
    h = (h ^ (h >> 32)) &* 0xD6E8_FEB8_6659_FD93
    return Int(bitPattern: UInt(h ^ (h >> 32)))
}

/// Up to 32 bytes as four words, zero-padded: how ``ByteKey``, ``IdKey`` and posting lists
/// hold and hash short keys. Each word holds its bytes in memory order (``IdKey`` reads
/// them back from the words' memory).
@inline(__always)
func fourWords(_ b: UnsafeRawBufferPointer) -> (UInt64, UInt64, UInt64, UInt64) {
    precondition(b.count <= 32, "four words hold 32 bytes")
    // Whole words loaded unaligned; a last partial word put together in a register. (Its
    // bytes stored one by one into the words' memory and then loaded as a word stall the
    // load: store-to-load forwarding fails from narrow stores to a wide load.)
    @inline(__always) func word(_ at: Int) -> UInt64 {
        let left = b.count - at
        if left >= 8 { return b.loadUnaligned(fromByteOffset: at, as: UInt64.self) }
        guard left > 0 else { return 0 }
        var w: UInt64 = 0
        for j in 0..<left { w |= UInt64(b[at + j]) << (8 * UInt64(j)) }
        return UInt64(littleEndian: w)
    }
    return (word(0), word(8), word(16), word(24))
}
