#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials

/// A leveled logger that writes single lines to stderr. Passed in, never global. A message
/// holds server bytes and file names: its control characters are escaped (`TerminalText`), so
/// that it stays one line and a terminal following the log obeys none of them.
/// Thread: any (each line is one write(2)).
public struct Logger: Sendable {
    public enum Level: Int, Comparable, Sendable, CaseIterable {
        case debug, info, warn, error

        public init?(name: String) {
            guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = level
        }

        public var name: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warn: "warn"
            case .error: "error"
            }
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public var level: Level
    public var label: String

    public init(label: String, level: Level = .info) {
        self.label = label
        self.level = level
    }

    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warn(_ message: @autoclosure () -> String) { log(.warn, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }

    func log(_ messageLevel: Level, _ message: @autoclosure () -> String) {
        guard messageLevel >= level else { return }
        let time = Timestamp.now.iso8601
        let line = "\(time) \(messageLevel.name) \(label): \(TerminalText.escape(message()))\n"
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }
}
