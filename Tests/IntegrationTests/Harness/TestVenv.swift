import Foundation

/// The Python venv with the third-party test servers (moto, tuspyserver + uvicorn) and boto3,
/// made by `scripts/deps.sh`'s `install_python_test_packages` (run by `scripts/test.sh`) from
/// `requirements.txt` next to this file: `<repository>/.build/test-venv`, or
/// `$TRANSFERD_TEST_VENV` when set (for the scripts and the harness alike).
enum TestVenv {
    /// The repository: three levels above this file (Tests/IntegrationTests/Harness).
    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    static var directory: URL {
        if let explicit = ProcessInfo.processInfo.environment["TRANSFERD_TEST_VENV"], !explicit.isEmpty {
            return URL(fileURLWithPath: explicit)
        }
        return repository.appendingPathComponent(".build/test-venv")
    }

    /// What to run to make the venv.
    static var installCommand: String {
        "bash -c 'source \(repository.path)/scripts/deps.sh && install_python_test_packages' (scripts/test.sh does it)"
    }

    /// `<venv>/bin/python3`; throws, naming the command that makes it, when it is missing.
    static func python() throws -> URL {
        let python = directory.appendingPathComponent("bin/python3")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw HarnessError("the test venv's python is missing (\(python.path)); make it with: \(installCommand)")
        }
        return python
    }
}
