#if canImport(Glibc)
import Dispatch
import Glibc
#endif

/// The transferd process: takes the state directory, opens the store, and runs the scheduler
/// and the control server on one libuv loop until SIGTERM or SIGINT.
public final class Daemon {
    public struct Options: Sendable {
        public var paths: StatePaths
        /// Given on the command line (`.some(nil)`: unlimited); nil keeps what the database has.
        public var limitDown: Int64??
        public var limitUp: Int64??
        /// `--limit-schedule`: a timetable; "" removes the stored one; nil keeps it.
        public var limitSchedule: LimitSchedule??
        /// The rest of the options, with their defaults.
        public var scheduler = Scheduler.Configuration()

        public init(paths: StatePaths) { self.paths = paths }
    }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case alreadyRunning(directory: String)
        case cannotCreate(path: String, reason: String)
        case cannotListen(socket: String, reason: String)
        case store(String)
        case untrusted(StateTrust.Problem)
        case library(CurlGlobal.LoadFailure)

        public var description: String {
            switch self {
            case .alreadyRunning(let directory):
                "another transferd is already running on \(directory) (stop it first, or use --state-dir)"
            case .cannotCreate(let path, let reason): "cannot create \(path): \(reason)"
            case .cannotListen(let socket, let reason): "cannot listen on \(socket): \(reason)"
            case .store(let reason): reason
            case .untrusted(let problem): problem.message
            case .library(let failure): failure.description
            }
        }
    }

    /// SIGTERM must end the process within 5 s even if a disk stalls.
    static let shutdownDeadlineMilliseconds: UInt64 = 4500

    private let options: Options
    private let logger: Logger
    private var lockDescriptor: Int32 = -1

    public init(options: Options, logger: Logger) {
        self.options = options
        self.logger = logger
    }

    /// Runs until stopped by a signal. Throws when it cannot start.
    public func run() throws {
        // First: the variables are unset before anything could start a child that inherits them.
        let activated: SocketActivation.Socket?
        do {
            activated = try SocketActivation.take()
        } catch {
            throw Failure.cannotListen(socket: "the socket from systemd", reason: error.description)
        }
        // Before anything is made: a daemon that cannot transfer changes nothing.
        do {
            try CurlGlobal.initialize()
        } catch {
            throw Failure.library(error)
        }
        let paths = options.paths
        try Self.makePrivateDirectory(paths.directory)
        let stateFiles = [paths.lock, paths.database, paths.database + "-wal", paths.database + "-shm"]
        if let problem = StateTrust.check(directory: paths.directory, files: stateFiles) {
            throw Failure.untrusted(problem)
        }
        try lock(paths.lock, directory: paths.directory)
        let descriptors = DescriptorBudget(limit: Self.raiseDescriptorLimit(), maxActive: options.scheduler.maxActive)
        if let code = CoreDumps.forbid() {
            logger.warn("cannot forbid core dumps (\(SystemError.describe(code))): a crash could write this process's secrets to disk")
        }
        signal(SIGPIPE, SIG_IGN)
        // Past a file-size limit, write(2) fails with EFBIG (a disk_full pause) instead of killing us.
        signal(SIGXFSZ, SIG_IGN)
        Memory.keepFreedForReuse()
        // Dispatch makes its timers' epoll descriptor when the first one is armed, and traps
        // (SIGILL) when it cannot: a table full of transfers met the store's first gathering
        // timer that way (docs/design.md). Armed once now, while descriptors are plenty.
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) {}

        let store: StoreQueue
        let unfinished: [Job]
        var limits: LimitSettings
        do {
            let previous = umask(0o077)
            let jobStore = try JobStore(path: paths.database)
            umask(previous)
            chmod(paths.database, 0o600)
            try jobStore.closeInterruptedAttempts()
            // A row that cannot run fails its job, not the daemon (no crash loop from stored data).
            for (id, problem) in try jobStore.quarantineInvalidJobs() {
                logger.error("job \(id): failed as \(InvalidJob.code): \(problem.message)")
            }
            // Ended jobs (quarantined ones too) own no destination.
            try jobStore.releaseEndedDestinations()
            unfinished = try jobStore.unfinishedJobs()
            // Limits persist; options given now replace the stored ones.
            limits = try LimitSettings.load(from: jobStore) { [logger] in logger.warn("ignoring a stored limit: \($0)") }
            if let down = options.limitDown { limits.down = down }
            if let up = options.limitUp { limits.up = up }
            if let schedule = options.limitSchedule { limits.schedule = schedule }
            try limits.save(to: jobStore)
            store = StoreQueue(jobStore)
        } catch {
            throw Failure.store("\(error)")
        }

        let loop = try UVLoop()
        var configuration = options.scheduler
        configuration.stateDirectory = paths.directory
        configuration.maxFinishing = descriptors.finishing
        let scheduler = try Scheduler(configuration: configuration, limits: limits, store: store, loop: loop,
                                      logger: logger)
        let inbox = LoopInbox<Scheduler>(loop: loop) { [weak scheduler] in scheduler }
        scheduler.inbox = inbox
        let commands = CommandService(scheduler: scheduler)

        // A socket systemd handed over is systemd's file: served, never unlinked. Otherwise we
        // hold the lock, so any socket file left at the path is stale.
        let endpoint: ControlServer.Endpoint
        let socketPath: String
        if let activated {
            endpoint = .descriptor(activated.descriptor)
            socketPath = activated.path ?? paths.socket
            if socketPath != paths.socket {
                logger.warn("the socket from systemd is \(socketPath), not \(paths.socket): "
                    + "transferctl needs --socket \(socketPath) (or TRANSFERD_SOCKET)")
            }
        } else {
            Self.warnIfOthersCanWrite(directoryOf: paths.socket, logger: logger)
            unlink(paths.socket)
            endpoint = .path(paths.socket)
            socketPath = paths.socket
        }
        let server: ControlServer
        do {
            server = try ControlServer(loop: loop, endpoint: endpoint, maxConnections: descriptors.connections,
                                       logger: logger,
                                       onRequest: { [unowned commands] request, origin, reply in
                                           commands.handle(request, from: origin, reply: reply)
                                       },
                                       onClose: { [unowned commands] in commands.connectionClosed($0) })
        } catch {
            throw Failure.cannotListen(socket: socketPath, reason: error.description)
        }
        commands.streams = { [unowned server] in server.stream(for: $0) }

        var stopping = false
        let deadline = UVTimer(loop: loop) { [logger] in
            logger.warn("shutdown took too long; exiting with checkpoints as they are")
            exit(0)
        }
        let stop: (Int32) -> Void = { [logger] signal in
            guard !stopping else { return }
            stopping = true
            logger.info("signal \(signal): checkpointing running transfers and stopping")
            deadline.start(after: Self.shutdownDeadlineMilliseconds)
            server.close()
            scheduler.shutdown {
                if activated == nil { unlink(paths.socket) }
                inbox.close()
                loop.stop()
            }
        }
        let signals = [SIGTERM, SIGINT].map { UVSignal(loop: loop, signal: $0, stop) }

        scheduler.start(with: unfinished)
        logger.info("transferd \(TransferdVersion.current) ready: \(unfinished.count) unfinished jobs, listening on \(socketPath)"
            + (activated == nil ? "" : " (socket from systemd)"))
        logger.info("file descriptors: \(descriptors.limit); up to \(descriptors.connections) control connections, "
            + "\(descriptors.reserve) kept for the store, the transfers and \(descriptors.finishing) downloads finishing beside them")
        loop.run()
        withExtendedLifetime((signals, server, deadline, scheduler, commands)) {}
        // Records still gathering for their commit (`StoreQueue.gathering`) are committed now;
        // a store that does not answer within a second holds nothing a restart cannot redo.
        if !store.commitWaiting(within: .seconds(1)) { logger.warn("the store did not answer; exiting without it") }
        logger.info("stopped")
    }

    /// Raises the soft limit on open files to the hard one: a descriptor refused for want of a
    /// higher soft limit is one a transfer waits for. Returns the limit in force.
    private static func raiseDescriptorLimit() -> Int {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return Int(sysconf(Int32(_SC_OPEN_MAX))) }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    private func lock(_ path: String, directory: String) throws(Failure) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .cannotCreate(path: path, reason: SystemError.describe(errno)) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw .alreadyRunning(directory: directory)
        }
        lockDescriptor = fd
    }

    /// A `--socket` in a directory other users can write (`/tmp`) can be replaced by one of
    /// them between two starts, or taken before this one: said at start, once.
    private static func warnIfOthersCanWrite(directoryOf socket: String, logger: Logger) {
        var info = stat()
        let directory = PartialFile.directory(of: socket)
        guard RawPath.withCString(directory, { stat($0, &info) }) == 0, info.st_mode & 0o022 != 0
        else { return }
        logger.warn("the socket's directory \(directory) is writable by other users: one of them "
            + "could put their own socket at \(socket); give --socket a path in a directory only you can write")
    }

    /// Creates the state directory (and parents) owner-only.
    private static func makePrivateDirectory(_ path: String) throws(Failure) {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0, errno != EEXIST {
                throw .cannotCreate(path: prefix, reason: SystemError.describe(errno))
            }
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw .cannotCreate(path: path, reason: "not a directory")
        }
    }
}
