import TransferEngine

/// transferd's command line.
enum DaemonArguments {
    enum Parsed {
        case run(Daemon.Options, Logger.Level)
        case help
        case version
        /// `--man` (hidden): transferd(8), from the help.
        case manual
    }

    struct UsageError: Error {
        var message: String
    }

    /// The defaults the help shows: the configuration's own.
    private static let defaults = Scheduler.Configuration()

    static let help = """
        usage: transferd [options]

        Runs the transfer daemon in the foreground, logging to stderr.

        Started by systemd with a listening socket (LISTEN_PID and LISTEN_FDS=1, the socket
        as descriptor 3; contrib/transferd.socket), it serves that socket instead of making
        its own, so the first transferctl command starts it; it never removes that file.

        Proxies: a job that names none uses the proxy of this process's environment, as
        libcurl reads it: http_proxy (lower case only) for http, https_proxy or HTTPS_PROXY
        for https, all_proxy or ALL_PROXY for both, and no_proxy or NO_PROXY for the hosts
        reached directly. A job that names its own proxy is not bound by them.

        options:
          --state-dir DIR      database and socket directory (default: $TRANSFERD_STATE_DIR,
                               else $XDG_STATE_HOME/transferd, else ~/.local/state/transferd)
          --socket PATH        control socket (default: DIR/transferd.sock or $TRANSFERD_SOCKET)
          --max-active N       transfers running at once (default: \(defaults.maxActive))
          --max-per-host N     transfers to one host (scheme, name and port) at once (default: \(defaults.maxPerHost))
          --limit-down RATE    global download limit, e.g. 4M (default: unlimited)
          --limit-up RATE      global upload limit (default: unlimited)
          --limit-schedule T   a bandwidth timetable, e.g. "Mon-Fri 08:00-18:00 down=1M up=512K; * off"
                               ('' removes it); limits and timetable persist across restarts
          --cacert FILE        CA bundle (PEM) for jobs that name none
          --stall-timeout S    abort and retry an attempt that moves no byte for S seconds (default: \(defaults.stallSeconds))
          --speed-limit RATE   abort and retry (later, its slot to the next job) an attempt slower than RATE
                               on average for --speed-time, unless a limit holds it back; 0 never
                               (default: \(defaults.speedLimit) bytes/s: a host that trickles gives its slot back)
          --speed-time S       the seconds --speed-limit averages over (default: \(defaults.speedSeconds))
          --retry N            retries after a failed attempt, for jobs that do not say (default: \(defaults.defaultRetries))
          --no-progress-timeout S  fail a job that moves no byte for S seconds (default: \(defaults.noProgressSeconds))
          --hook-timeout S     kill an --on-complete/--on-fail command after S seconds (default: \(defaults.hookTimeoutSeconds))
          --max-filesize SIZE  fail a download (too_large) whose body passes SIZE, e.g. 50G, unless the
                               job sets its own (default: none)
          --keep-history D     prune the jobs that ended more than D ago (e.g. 30d, 12h), as
                               transferctl prune --older-than D does, at start and then
                               hourly (default: keep every job)
          --log-level LEVEL    debug, info, warn or error (default: info)
          --version            print the version and exit
          -h, --help           print this help and exit
        """

    /// transferd(8): the help as a man page (man/transferd.8 holds it; a test fails when that is stale).
    static var manual: String {
        var page = ManPage(name: "transferd", section: "8", summary: HelpText(help).summary,
                           version: "transferd \(TransferdVersion.current)", manual: "System Manager's Manual")
        page.addProgram(HelpText(help))
        page.addSection("SEE ALSO")
        page.addParagraph("transferctl(1); the documentation in the source repository: README.md, docs/cli.md, "
            + "docs/design.md, contrib/transferd.service and contrib/transferd.socket")
        return page.render()
    }

    /// A number within its documented range (NumericLimits).
    private static func number(_ option: String, _ text: String, _ limit: NumericLimit<Int>) throws(UsageError) -> Int {
        do { return try limit.parse(text, option) } catch { throw UsageError(message: error.message) }
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> Parsed {
        var stateDirectory: String?
        var socket: String?
        var configuration = Scheduler.Configuration()
        var limitDown: Int64??
        var limitUp: Int64??
        var limitSchedule: LimitSchedule??
        var level = Logger.Level.info
        var index = 0
        func value(_ option: String) throws(UsageError) -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(message: "\(option) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "-h", "--help": return .help
            case "--version": return .version
            case "--man": return .manual
            case "--state-dir": stateDirectory = try value(argument)
            case "--socket": socket = try value(argument)
            case "--max-active": configuration.maxActive = try number(argument, try value(argument), NumericLimits.transfers)
            case "--max-per-host": configuration.maxPerHost = try number(argument, try value(argument), NumericLimits.transfers)
            case "--hook-timeout": configuration.hookTimeoutSeconds = try number(argument, try value(argument), NumericLimits.timeoutSeconds)
            case "--limit-down", "--limit-up":
                let text = try value(argument)
                let rate: Int64?
                do { rate = try Rate.parse(text) } catch { throw UsageError(message: error.message) }
                if argument == "--limit-down" { limitDown = .some(rate) } else { limitUp = .some(rate) }
            case "--limit-schedule":
                let text = try value(argument)
                do {
                    limitSchedule = .some(text.isEmpty ? nil : try LimitSchedule.parse(text))
                } catch {
                    throw UsageError(message: error.message)
                }
            case "--stall-timeout": configuration.stallSeconds = try number(argument, try value(argument), NumericLimits.timeoutSeconds)
            case "--speed-limit":
                let text = try value(argument)
                do { configuration.speedLimit = try Rate.parse(text) ?? 0 } catch { throw UsageError(message: "--speed-limit: \(error.message)") }
            case "--speed-time": configuration.speedSeconds = try number(argument, try value(argument), NumericLimits.timeoutSeconds)
            case "--retry": configuration.defaultRetries = try number(argument, try value(argument), NumericLimits.retries)
            case "--no-progress-timeout":
                configuration.noProgressSeconds = try number(argument, try value(argument), NumericLimits.timeoutSeconds)
            case "--max-filesize":
                let text = try value(argument)
                do { configuration.maxFilesize = try ByteCount.parse(text) } catch { throw UsageError(message: "--max-filesize: \(error.message)") }
            case "--test-clock":
                // For tests only, and so not in the help: timetables see this instant now.
                let text = try value(argument)
                guard let instant = Timestamp(iso8601: text) else {
                    throw UsageError(message: "--test-clock needs an ISO 8601 time like 2026-11-28T12:00:00Z, got '\(text)'")
                }
                configuration.wallClock = WallClock(startingAt: instant)
            case "--keep-history":
                let text = try value(argument)
                do { configuration.keepHistory = try Age.parse(text, argument) } catch { throw UsageError(message: error.message) }
            case "--cacert":
                configuration.cacert = StatePaths.absolute(try value(argument))
            case "--log-level":
                let text = try value(argument)
                guard let parsed = Logger.Level(name: text) else {
                    throw UsageError(message: "--log-level must be debug, info, warn or error, got '\(text)'")
                }
                level = parsed
            default:
                let closest = Spelling.closest(to: argument, among: HelpText(help).options)
                throw UsageError(message: "unknown option '\(argument)'\(closest.map { "; did you mean '\($0)'?" } ?? "") "
                    + "(see transferd --help)")
            }
            index += 1
        }
        var options = Daemon.Options(paths: StatePaths(stateDirectory: stateDirectory, socket: socket))
        options.limitDown = limitDown
        options.limitUp = limitUp
        options.limitSchedule = limitSchedule
        options.scheduler = configuration
        return .run(options, level)
    }
}
