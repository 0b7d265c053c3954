#if canImport(Glibc)
import Glibc
#endif
import TransferEngine

// transferd: parse options, run the daemon, exit. Everything else lives in TransferEngine.
let logger: Logger
let options: Daemon.Options
do {
    let parsed = try DaemonArguments.parse(Array(CommandLine.arguments.dropFirst()))
    switch parsed {
    case .help:
        print(DaemonArguments.help)
        exit(ExitStatus.success.rawValue)
    case .manual:
        FileHandle.standardOutput.write(DaemonArguments.manual)
        exit(ExitStatus.success.rawValue)
    case .version:
        print("transferd \(TransferdVersion.current)")
        exit(ExitStatus.success.rawValue)
    case .run(let runOptions, let level):
        options = runOptions
        logger = Logger(label: "transferd", level: level)
    }
} catch {
    FileHandle.standardError.write("transferd: \(error.message)\n")
    exit(ExitStatus.usage.rawValue)
}

do {
    try Daemon(options: options, logger: logger).run()
    exit(ExitStatus.success.rawValue)
} catch {
    FileHandle.standardError.write("transferd: \(error)\n")
    exit(ExitStatus.failure.rawValue)
}
