/// Offline waiting: jobs whose host cannot be reached wait (`waiting`, reason offline) and are
/// queued again as soon as one shared connect-only probe reaches the host.
extension Scheduler {
    /// Makes `scheduled` wait for its host, starting a probe for the host if none runs.
    func waitForHost(_ scheduled: ScheduledJob) {
        guard let candidate = HostProbe(jobURL: scheduled.job.url) else { return }
        let probe = probes[candidate.key] ?? candidate
        if probes[probe.key] == nil {
            probes[probe.key] = probe
            let key = probe.key
            probe.schedule(on: loop) { [unowned self] in launchProbe(key) }
        }
        probe.jobs.insert(scheduled.id)
    }

    private func launchProbe(_ key: String) {
        guard let probe = probes[key] else { return }
        var request = CurlEasy.Request(url: probe.url)
        request.connectOnly = true
        request.connectTimeoutSeconds = 10
        guard let easy = try? CurlEasy(request), (try? multi.add(easy)) != nil else {
            return probe.schedule(on: loop) { [unowned self] in launchProbe(key) }
        }
        probesByEasy[ObjectIdentifier(easy)] = key
    }

    /// A probe finished: the host answers (queue its jobs) or not (probe again later).
    /// Returns false when `easy` was not a probe.
    func probeEnded(_ easy: CurlEasy, _ code: CurlCode) -> Bool {
        guard let key = probesByEasy.removeValue(forKey: ObjectIdentifier(easy)), let probe = probes[key] else {
            return false
        }
        guard code.category == .ok else {
            probe.schedule(on: loop) { [unowned self] in launchProbe(key) }
            return true
        }
        logger.info("\(key) answers again: \(probe.jobs.count) waiting jobs go back in the queue")
        probes[key] = nil
        probe.cancel()
        for id in probe.jobs {
            guard let scheduled = jobs[id], scheduled.job.state == .waiting else { continue }
            change(scheduled, StateChange(.queued, reason: "\(key) answers again"))
        }
        startNext()
        return true
    }
}
