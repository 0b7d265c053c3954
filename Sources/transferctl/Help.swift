/// `transferctl --help`.
enum Help {
    static let overview = """
        usage: transferctl [--state-dir DIR] [--socket PATH] [--json] COMMAND [options]

        Controls transferd, the resumable transfer daemon.

        commands:
          download URL -o PATH    queue a download; prints the job id
          upload URL -F ...|-T F  queue an upload streamed from disk; prints the job id
          list                    jobs, newest first
          show ID                 one job in full, with its attempts
          pause ID...|--all|--batch B   pause; a running transfer stops within a second
          resume ID...|--all|--batch B  continue paused jobs
          cancel ID...|--batch B  cancel; partial data is removed
          retry ID...             queue failed jobs again
          modify ID [--url U] [-H ..] ...   change a job that is not transferring
          wait ID...|--batch B    block until the jobs end (exit 1 if any failed)
          batch submit FILE|-     queue a JSON Lines manifest as one batch (all or nothing)
          batch create|list|show  an empty batch for --batch B; batch totals
          backup DIR --to URL     upload the files under DIR that changed, as one batch
          prune [--older-than D]  delete ended jobs (history), e.g. those older than 30d
          resume-data ID          print the job's resume data
          limit [--down R] [--up R] | limit ID RATE   show or change bandwidth limits
          watch [ID|--batch B]    live progress bars, from the event stream
          events [--follow]       what the daemon did: state changes, attempts, retries, limits
          stats                   daemon version, jobs by state, rates and limits
          completion bash|zsh|fish  print a shell completion script

        global options:
          --state-dir DIR   the daemon's state directory (default as transferd's)
          --socket PATH     the daemon's control socket
          --json            machine-readable output
          --version         print transferctl's version and exit

        exit status: 0 success, 1 failure, 2 usage error, 3 daemon unreachable,
        124 wait timed out.

        Run 'transferctl COMMAND --help' for a command's options.

        """
}
