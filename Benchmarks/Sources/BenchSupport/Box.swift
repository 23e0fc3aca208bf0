/// State a benchmark's set-up hands to its body and tear-down.
public final class Box<T>: @unchecked Sendable {
    // Safe: ordo-one/benchmark runs a benchmark's setup, iterations and teardown one
    // after another, so `value` is never accessed concurrently.
    public var value: T?
    public init() {}
    public var get: T { value! }
}
