import CMallocInfo

/// Tracks the heap in use (glibc `mallinfo2()`: `uordblks` plus `hblkhd`, the blocks malloc
/// took with mmap, such as a rebuild's 256 KiB digest chunks; not the LMDB map's file
/// pages) while a streaming workload runs: the peak above the starting level, both over
/// the first half of the work and over all of it. A workload whose heap is flat in the
/// number of events shows the same peak for both.
public final class HeapProbe {
    private let start: Int
    public private(set) var peakEarly = 0
    public private(set) var peak = 0
    private let total: UInt64

    public init(total: UInt64) {
        self.total = total
        start = HeapProbe.inUse()
    }

    /// Samples the heap at progress `done` (events processed so far).
    public func sample(_ done: UInt64) { sample(early: done <= total / 2) }

    /// Samples the heap; `early` while within the first half of the work.
    public func sample(early: Bool) {
        let grown = max(0, HeapProbe.inUse() - start)
        peak = max(peak, grown)
        if early { peakEarly = max(peakEarly, grown) }
    }

    public static func inUse() -> Int {
        let m = mallinfo2()
        return Int(m.uordblks) + Int(m.hblkhd)
    }
}
