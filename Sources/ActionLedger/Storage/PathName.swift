/// A path's folder and last name, as `dirname` and `basename` give them: without Foundation's
/// `NSString` path methods, which trap on a one-character name on Linux (`"Z"`), a store or
/// output name anyone may give.
public enum PathName {
    /// The folder holding `path`: `.` for a bare name, `/` for a name at the root.
    public static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The last component of `path` (all of it when it has no `/`).
    public static func name(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}
