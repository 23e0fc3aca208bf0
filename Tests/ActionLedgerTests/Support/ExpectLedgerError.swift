import Testing
@testable import ActionLedger

// `#expect(throws: LedgerError.self)` passes on any refusal, including the wrong one. These
// name the code the engine must give, and return the error for further checks.

/// Expects `body` to throw a ``LedgerError`` with `code`; records an issue otherwise.
@discardableResult
func expectLedgerError<R>(_ code: LedgerError.Code, _ comment: @autoclosure () -> String = "",
                          sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R) -> LedgerError? {
    let label = comment().isEmpty ? "" : " (\(comment()))"
    do {
        _ = try body()
        Issue.record("expected \(code), nothing was thrown\(label)", sourceLocation: sourceLocation)
        return nil
    } catch let e as LedgerError {
        if e.code != code {
            Issue.record("expected \(code), got \(e)\(label)", sourceLocation: sourceLocation)
        }
        return e
    } catch {
        Issue.record("expected LedgerError \(code), got \(type(of: error)): \(error)\(label)", sourceLocation: sourceLocation)
        return nil
    }
}

/// As ``expectLedgerError(_:_:sourceLocation:_:)``, but stops the test (throws) unless the
/// error has `code`.
@discardableResult
func requireLedgerError<R>(_ code: LedgerError.Code, _ comment: @autoclosure () -> String = "",
                           sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R) throws -> LedgerError {
    guard let e = expectLedgerError(code, comment(), sourceLocation: sourceLocation, body), e.code == code else {
        throw NotTheExpectedError(description: "stopped: the test needs \(code) here (recorded above)")
    }
    return e
}

struct NotTheExpectedError: Error, CustomStringConvertible {
    let description: String
}
