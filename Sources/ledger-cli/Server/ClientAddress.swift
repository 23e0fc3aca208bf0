#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A caller's network address, as the key of the per-address rate limit for calls without a
/// live token (``AuthMiddleware``).
///
/// IPv6 callers are grouped by their /64: one host is routinely given a whole /64, so
/// counting single addresses would let it take a fresh bucket per request. An IPv4-mapped
/// IPv6 address is its IPv4 address.
struct ClientAddress: Hashable, Sendable {
    /// 4 bytes (IPv4) or 16 (IPv6).
    let bytes: [UInt8]

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// Parses an address as a socket or an `X-Forwarded-For` entry gives it: `203.0.113.7`,
    /// `2001:db8::1`, `[2001:db8::1]`, `[2001:db8::1]:443` or `203.0.113.7:443`; nil otherwise.
    init?(_ text: some StringProtocol) {
        var s = Substring(text).drop { $0 == " " || $0 == "\t" }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        if s.hasPrefix("["), let close = s.firstIndex(of: "]") {
            s = s[s.index(after: s.startIndex)..<close]
        } else if s.filter({ $0 == ":" }).count == 1, let colon = s.firstIndex(of: ":") {
            s = s[..<colon]  // IPv4 with a port
        }
        if let scope = s.firstIndex(of: "%") { s = s[..<scope] }
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, String(s), &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, String(s), &v6) == 1 {
            let b = withUnsafeBytes(of: &v6) { Array($0) }
            bytes = b.prefix(10).allSatisfy { $0 == 0 } && b[10] == 0xff && b[11] == 0xff ? Array(b.suffix(4)) : b
        } else {
            return nil
        }
    }

    /// The address a rate limit and a connection cap count under: an IPv4 address, an IPv6
    /// /64 (one host holds a whole /64: counting single addresses would give it a fresh count
    /// per address).
    var bucketAddress: ClientAddress {
        bytes.count == 4 ? self : ClientAddress(bytes: Array(bytes.prefix(8)) + [UInt8](repeating: 0, count: 8))
    }

    /// The rate limit's key: ``bucketAddress`` as text (`198.51.100.7`, `2001:db8:0:1::/64`).
    var bucket: String {
        let b = bucketAddress.bytes
        if b.count == 4 { return b.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(b[$0]) << 8 | UInt16(b[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }

    /// The client behind `peer`: `peer` itself, unless it is one of `trusted` (a reverse proxy
    /// in front), in which case `X-Forwarded-For` is read from the right: the first entry that
    /// is not a trusted proxy is the client (entries to its left were written by the client,
    /// so they prove nothing). A malformed entry stops the walk at the last address read.
    static func client(peer: ClientAddress?, forwardedFor: String?, trusted: Set<ClientAddress>) -> ClientAddress? {
        guard var client = peer, trusted.contains(client), let forwardedFor else { return peer }
        for entry in forwardedFor.split(separator: ",").reversed() {
            guard let address = ClientAddress(entry) else { break }
            client = address
            if !trusted.contains(address) { break }
        }
        return client
    }
}
