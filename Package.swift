// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "transferd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "transferd", targets: ["transferd"]),
        .executable(name: "transferctl", targets: ["transferctl"]),
    ],
    targets: [
        // Typed, non-variadic wrappers around libcurl, libuv and SQLite (Swift cannot call C varargs).
        // libcurl is opened at run time, not linked (curl_library.c).
        .target(
            name: "CTransferSupport",
            // DWARF 4: Debian 12's valgrind (bench/instructions.sh) gives up on a binary whose C
            // parts carry clang's default DWARF 5 ("unhandled dwarf2 abbrev form code 0x25").
            cSettings: [.unsafeFlags(["-gdwarf-4"])],
            linkerSettings: [
                .linkedLibrary("dl"),
                .linkedLibrary("uv"),
                .linkedLibrary("sqlite3"),
            ]
        ),
        // Build tool: turns Migrations/*.sql into Swift source so the binary carries its schema.
        .executableTarget(name: "MigrationEmbedder"),
        .plugin(
            name: "EmbedMigrations",
            capability: .buildTool(),
            dependencies: ["MigrationEmbedder"]
        ),
        .target(
            name: "TransferEngine",
            dependencies: ["CTransferSupport"],
            plugins: ["EmbedMigrations"]
        ),
        .executableTarget(name: "transferd", dependencies: ["TransferEngine"]),
        .executableTarget(name: "transferctl", dependencies: ["TransferEngine"]),
        // Fixtures/ (captured server answers) is read by a #filePath-relative path, not as resources.
        .testTarget(name: "TransferEngineTests", dependencies: ["TransferEngine"], exclude: ["Fixtures"]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["transferd", "transferctl"],
            exclude: ["Harness/upload_receiver.py", "Harness/fault_server.py", "Harness/net_server.py",
                      "Harness/s3_server.py", "Harness/s3_client.py", "Harness/s3_capture.py", "Harness/s3_operations.py",
                      "Harness/s3_relay.py", "Harness/tus_server.py", "Harness/tussi_server.py", "Harness/tus_counting.py",
                      "Harness/hostile_session_server.py",
                      "Harness/requirements.txt", "Harness/requirements-moto-5.2.1.txt", "Golden"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
