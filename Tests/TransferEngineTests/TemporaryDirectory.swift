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
}
