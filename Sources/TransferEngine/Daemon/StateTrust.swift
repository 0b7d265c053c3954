#if canImport(Glibc)
import Glibc
#endif

/// Whether the daemon may trust its state directory and the files in it: a directory someone
/// else owns, or can write, could hold a planted database whose hooks would run as us. Each
/// must be ours (the daemon's effective uid) and writable by nobody else; a file readable by
/// others is made owner-only (it holds headers and tokens). The decision is pure; `check`
/// applies it to the file system.
public enum StateTrust {
    /// What is wrong with one path, in words that say how to fix it.
    public enum Problem: Equatable, Sendable {
        case foreignOwner(path: String, owner: UInt32, expected: UInt32)
        case writableByOthers(path: String, mode: UInt32)
        case notADirectory(path: String)
        case notARegularFile(path: String)

        public var message: String {
            switch self {
            case .foreignOwner(let path, let owner, let expected):
                "\(path) belongs to uid \(owner), not to this daemon's uid \(expected): refusing to use it " +
                    "(remove it, or choose another --state-dir)"
            case .writableByOthers(let path, let mode):
                "\(path) is writable by others (mode \(String(mode & 0o7777, radix: 8))): refusing to use it " +
                    "(chmod go-w '\(path)', or choose another --state-dir)"
            case .notADirectory(let path): "\(path) is not a directory (choose another --state-dir)"
            case .notARegularFile(let path):
                "\(path) is not a regular file (a symlink or a device?): refusing to use it (remove it)"
            }
        }
    }

    /// The state directory or one of its files, as `lstat` describes it.
    public static func problem(path: String, isDirectory expectDirectory: Bool, type: UInt32, owner: UInt32,
                               mode: UInt32, uid: UInt32) -> Problem? {
        if expectDirectory, type != UInt32(S_IFDIR) { return .notADirectory(path: path) }
        if !expectDirectory, type != UInt32(S_IFREG) { return .notARegularFile(path: path) }
        if owner != uid { return .foreignOwner(path: path, owner: owner, expected: uid) }
        if mode & 0o022 != 0 { return .writableByOthers(path: path, mode: mode) }
        return nil
    }

    /// Checks the directory and whichever of `files` exist; makes those files owner-only.
    public static func check(directory: String, files: [String]) -> Problem? {
        let uid = UInt32(geteuid())
        var info = stat()
        // The directory as it resolves (a symlink to a directory of ours is fine; what counts is
        // who owns and may write the directory itself); the files in it may not be symlinks.
        guard stat(directory, &info) == 0 else { return .notADirectory(path: directory) }
        if let problem = problem(path: directory, isDirectory: true, type: UInt32(info.st_mode) & UInt32(S_IFMT),
                                 owner: UInt32(info.st_uid), mode: UInt32(info.st_mode), uid: uid) {
            return problem
        }
        for file in files where lstat(file, &info) == 0 {
            if let problem = problem(path: file, isDirectory: false, type: UInt32(info.st_mode) & UInt32(S_IFMT),
                                     owner: UInt32(info.st_uid), mode: UInt32(info.st_mode), uid: uid) {
                return problem
            }
            if info.st_mode & 0o077 != 0 { chmod(file, 0o600) }
        }
        return nil
    }
}
