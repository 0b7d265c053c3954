import TransferEngine

/// transferctl(1), made from the help texts: `transferctl --help` for the frame, then every
/// command's `--help`. `transferctl --man` prints it; man/transferctl.1 holds it, and a test
/// fails when that file is stale.
enum Manual {
    static var page: String {
        let overview = HelpText(Help.overview)
        var page = ManPage(name: "transferctl", section: "1", summary: overview.summary,
                           version: "transferd \(TransferdVersion.current)", manual: "User Commands")
        page.addProgram(overview)
        page.addSection("COMMAND DETAILS")
        var shown: [String] = []
        for (name, type) in TransferCtl.commands {
            // pause, resume, cancel and retry share one help: shown once, under all their names.
            let sharing = TransferCtl.commands.filter { $0.value.help == type.help }.map(\.key)
            guard !shown.contains(name) else { continue }
            shown += sharing
            page.addCommand(sharing.joined(separator: ", "), HelpText(type.help))
        }
        page.addSection("SEE ALSO")
        page.addParagraph("transferd(8); the documentation in the source repository: README.md, docs/cli.md, "
            + "docs/batches.md, docs/events.md, docs/resume-data.md, docs/control-protocol.md")
        return page.render()
    }
}
