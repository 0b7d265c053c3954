import Foundation

/// A fresh directory under /tmp, removed when the value is dropped.
final class TemporaryDirectory {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "transferd-tests-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    /// A database path in `state/`, a directory of its own as in the daemon: transferd refuses
    /// destinations inside the state directory.
    func database(_ name: String) -> String {
        try? FileManager.default.createDirectory(atPath: path + "/state", withIntermediateDirectories: true)
        return path + "/state/" + name
    }
}
