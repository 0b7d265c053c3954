import Foundation

/// The tus servers the interop tests run against (issue 59: tussi limits a PATCH to 10 MiB and
/// offers no termination; tuspyserver takes any chunk and offers it).
enum TusImplementation: String, CaseIterable, Sendable {
    case tuspyserver
    case tussi

    /// A server of this kind (not started) keeping its files in `directory`.
    func makeServer(directory: URL) throws -> any TusServing {
        switch self {
        case .tuspyserver: return try TusServer(directory: directory)
        case .tussi: return try TussiServer(directory: directory)
        }
    }
}
