import FoundationEssentials

/// The timer of the next probe of one unreachable host: one probe per host however many jobs
/// wait on it (the core keeps which), backing off from 1 s to 30 s. Thread: the loop thread.
final class HostProbe {
    static let firstInterval: UInt64 = 1000
    static let maxInterval: UInt64 = 30_000

    /// `scheme://host:port` of the jobs' URLs, and their route (`NetworkOptions.routeKey`).
    let key: String
    /// A plain `http://host:port/` URL: a probe only needs the TCP connection to succeed.
    let url: String
    /// The jobs' proxy, IP version and addresses: the probe goes their way.
    let route: NetworkOptions
    private var interval = HostProbe.firstInterval
    private var timer: UVTimer?

    init?(jobURL: String, route: NetworkOptions = NetworkOptions()) {
        guard let (key, url) = HostKey.parse(jobURL) else { return nil }
        self.key = key + route.routeKey
        self.url = url
        self.route = route
    }

    /// Runs `probe` after the current interval, then doubles it (up to 30 s).
    func schedule(on loop: UVLoop, _ probe: @escaping () -> Void) {
        if timer == nil { timer = UVTimer(loop: loop, probe) }
        timer?.start(after: interval)
        interval = min(interval * 2, Self.maxInterval)
    }

    func cancel() { timer?.stop() }
}
