/// Offline waiting, the engine's side: one shared connect-only probe per unreachable host,
/// backing off, until it reaches the host (the core then queues the host's waiting jobs).
extension Scheduler {
    /// Probes the host of `jobURL` by `route` unless a probe for them runs already.
    func probe(_ jobURL: String, route: NetworkOptions) {
        guard let probe = HostProbe(jobURL: jobURL, route: route), probes[probe.key] == nil else { return }
        probes[probe.key] = probe
        let key = probe.key
        probe.schedule(on: loop) { [unowned self] in launchProbe(key) }
    }

    private func launchProbe(_ key: String) {
        guard let probe = probes[key] else { return }
        var request = CurlEasy.Request(url: probe.url)
        request.connectOnly = true
        request.connectTimeoutSeconds = 10
        request.network = probe.route
        guard let easy = try? CurlEasy(request), (try? multi.add(easy)) != nil else {
            return probe.schedule(on: loop) { [unowned self] in launchProbe(key) }
        }
        probesByEasy[ObjectIdentifier(easy)] = key
    }

    /// A probe finished: the host answers (the core queues its jobs) or not (probe again later).
    /// Returns false when `easy` was not a probe.
    func probeEnded(_ easy: CurlEasy, _ code: CurlCode) -> Bool {
        guard let key = probesByEasy.removeValue(forKey: ObjectIdentifier(easy)), let probe = probes[key] else {
            return false
        }
        guard code.category == .ok else {
            probe.schedule(on: loop) { [unowned self] in launchProbe(key) }
            return true
        }
        probes[key] = nil
        probe.cancel()
        feed(.hostAnswered(key))
        return true
    }
}
