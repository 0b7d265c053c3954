#if canImport(Glibc)
import Glibc
#endif
import TransferEngine

// transferctl: parse, run one subcommand against the daemon, exit with its status. The
// arguments are read as bytes (`CommandLine.arguments` repairs bytes that are not UTF-8), so
// that a path given in them names exactly its file.
let arguments = (1..<Int(CommandLine.argc)).map { RawPath.string(cString: CommandLine.unsafeArgv[$0]!) }
exit(TransferCtl.run(arguments).rawValue)
