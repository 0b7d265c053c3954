#if canImport(Glibc)
import Glibc
#endif
import TransferEngine

/// The network options of `download`, `upload` and `backup`, with curl's names and syntax; each
/// value is checked as it is read (`NetworkOptions`' rules), so a bad one is refused with one
/// line before anything is sent.
enum NetworkArguments {
    /// The options given (nil when none); `compressed` is `download --compressed`'s to pass.
    static func parse(_ arguments: inout ArgumentList, compressed: Bool = false) throws -> NetworkOptions? {
        var network = NetworkOptions()
        do {
            network.proxy = try arguments.option("-x", "--proxy").map(NetworkOptions.proxyURL)
            network.noProxy = try arguments.option("--noproxy")
            network.connectTimeout = try arguments.option("--connect-timeout").map { text throws(NetworkOptionError) in
                try NetworkOptions.seconds(text, .connectTimeout)
            }
            network.maxTime = try arguments.option("-m", "--max-time").map { text throws(NetworkOptionError) in
                try NetworkOptions.seconds(text, .maxTime)
            }
            if let text = try arguments.option("-u", "--user") {
                (network.user, network.password) = try NetworkOptions.credentials(text)
            }
            // --netrc is the netrc of whoever queues the job, named by path: the daemon, which
            // reads it, may run as another user (with another home).
            let homeNetrc = arguments.flag("-n", "--netrc")
            let home = StatePaths.environment("HOME") ?? ""
            if let file = try arguments.option("--netrc-file") {
                network.netrcFile = StatePaths.absolute(file)
            } else if homeNetrc {
                network.netrcFile = StatePaths.absolute((home.isEmpty ? homeDirectory : home) + "/.netrc")
            }
            let ipv4 = arguments.flag("-4", "--ipv4")
            let ipv6 = arguments.flag("-6", "--ipv6")
            if ipv4, ipv6 { throw UsageError("-4 (--ipv4) and -6 (--ipv6) exclude each other") }
            network.ipVersion = ipv4 ? .v4 : ipv6 ? .v6 : nil
            network.resolve = try arguments.interleavedOptions("--resolve").map { entry throws(NetworkOptionError) in
                try NetworkOptions.resolveEntry(entry.value)
            }
            network.compressed = compressed
            try network.check()
        } catch let error as NetworkOptionError {
            throw UsageError(error.message)
        }
        return network.isDefault ? nil : network
    }

    /// The user's home directory from the password database (when `HOME` is not set).
    private static var homeDirectory: String {
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return "/" }
        return RawPath.string(cString: directory)
    }
}
