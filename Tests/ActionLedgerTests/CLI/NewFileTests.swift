import Foundation
import Testing
@testable import ledger_cli

/// `backup` and `export --out` name their file only once it is whole. The unnamed-file path
/// runs in every CLI test; the named fallback (`DEST.partial-PID`, for file systems without
/// `O_TMPFILE` or without `/proc`) is run here directly.
@Suite struct NewFileTests {
    @Test(arguments: [true, false])
    func aNewFileIsNamedOnlyWhenWholeAndNeverReplacesAnything(unnamed: Bool) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("al-newfile-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let dest = dir + "/out.jsonl", partial = dest + ".partial-\(getpid())"
        do {
            let file = try NewFile(dest, unnamed: unnamed)
            let bytes = Array("one line\n".utf8)
            #expect(write(file.fd, bytes, bytes.count) == bytes.count)
            // Until committed, DEST has no name; the fallback's partial name is owner-only.
            #expect(!FileManager.default.fileExists(atPath: dest))
            #expect(FileManager.default.fileExists(atPath: partial) == !unnamed)
            if !unnamed {
                var st = stat()
                #expect(stat(partial, &st) == 0 && st.st_mode & 0o777 == 0o600)
            }
            try file.commit()
        }
        #expect(FileManager.default.contents(atPath: dest) == Data("one line\n".utf8))
        #expect(!FileManager.default.fileExists(atPath: partial))
        // An existing DEST is refused before anything is written; a failed file leaves no partial.
        #expect(throws: (any Error).self) { try NewFile(dest, unnamed: unnamed) }
        let other = dir + "/other.jsonl"
        do {
            _ = try NewFile(other, unnamed: unnamed)  // dropped uncommitted, as a failed command's is
        }
        #expect(!FileManager.default.fileExists(atPath: other) && !FileManager.default.fileExists(atPath: other + ".partial-\(getpid())"))
        // DEST appearing meanwhile is kept, not replaced.
        let raced = dir + "/raced.jsonl"
        let file = try NewFile(raced, unnamed: unnamed)
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: raced))
        #expect(throws: (any Error).self) { try file.commit() }
        #expect(FileManager.default.contents(atPath: raced) == Data("theirs".utf8))
        // A planted symlink at the partial name is refused, never followed.
        if !unnamed {
            let target = dir + "/target", planted = dir + "/planted.jsonl"
            try Data("keep".utf8).write(to: URL(fileURLWithPath: target))
            try FileManager.default.createSymbolicLink(atPath: planted + ".partial-\(getpid())", withDestinationPath: target)
            #expect(throws: (any Error).self) { try NewFile(planted, unnamed: false) }
            #expect(FileManager.default.contents(atPath: target) == Data("keep".utf8))
        }
    }
}
