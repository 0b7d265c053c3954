#if canImport(Glibc)
import Glibc
#endif
import TransferEngine

// transferctl: parse, run one subcommand against the daemon, exit with its status.
exit(TransferCtl.run(Array(CommandLine.arguments.dropFirst())).rawValue)
