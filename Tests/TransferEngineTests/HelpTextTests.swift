import Testing
@testable import TransferEngine

@Suite struct HelpTextTests {
    static let sample = """
        usage: tool run URL -o PATH [options]
               tool run --again FILE

        Runs a thing. Then
        stops.

        exit status: 0 success,
        1 failure.

        options:
          -o, --output PATH     where it goes
                                (continued)
          --cacert, --pinned-pubkey,
          --key                 as for run
          --no-schedule         removes it; Mon-Fri and re-run are no options

        first   what the first does
        second  what the second does

        examples:
          tool run x -o y
            indented more
        """

    @Test func readsTheBlocksOfAHelpText() {
        let help = HelpText(Self.sample)
        #expect(help.blocks == [
            .usage(["tool run URL -o PATH [options]", "tool run --again FILE"]),
            .paragraph(label: nil, text: "Runs a thing. Then stops."),
            .paragraph(label: "exit status", text: "0 success, 1 failure."),
            .list(label: "options", items: [
                HelpText.Item(term: "-o, --output PATH", description: "where it goes (continued)"),
                HelpText.Item(term: "--cacert, --pinned-pubkey, --key", description: "as for run"),
                HelpText.Item(term: "--no-schedule", description: "removes it; Mon-Fri and re-run are no options"),
            ]),
            .list(label: nil, items: [
                HelpText.Item(term: "first", description: "what the first does"),
                HelpText.Item(term: "second", description: "what the second does"),
            ]),
            .verbatim(label: "examples", lines: ["tool run x -o y", "  indented more"]),
        ])
        #expect(help.summary == "runs a thing")
    }

    @Test func findsEveryOptionNamedAndNothingElse() {
        #expect(HelpText(Self.sample).options == ["-o", "--again", "--output", "--cacert", "--pinned-pubkey", "--key", "--no-schedule"])
        #expect(HelpText.options(in: "-k/--insecure, -H @FILE, '-' reads stdin, X-Api-Key, HH:MM-HH:MM, -1") == ["-k", "--insecure", "-H"])
        #expect(HelpText.options(in: "-4, --ipv4  v4 only; -6/--ipv6; from -1 to 4, -2 --x") == ["-4", "--ipv4", "-6", "--ipv6", "--x"],
                "a digit is an option beside its long name only")
    }

    @Test func rendersRoffWithNothingReadAsARequest() {
        var page = ManPage(name: "tool", section: "1", summary: "runs a thing", version: "tool 1", manual: "User Commands")
        page.addProgram(HelpText("usage: tool [options]\n\nRuns a thing.\n\noptions:\n  --dry-run  'quoted' \\ here\n\nexamples:\n  .hidden -x\n"))
        let roff = page.render()
        #expect(roff.contains(".TH \"TOOL\" 1 \"\" \"tool 1\" \"User Commands\"\n"))
        #expect(roff.contains(".SH NAME\ntool \\- runs a thing\n"))
        #expect(roff.contains(".SH \"OPTIONS\"\n.TP\n\\fB\\-\\-dry\\-run\\fR\n\\&'quoted' \\e here\n"))
        #expect(roff.contains(".nf\n\\&.hidden \\-x\n.fi"))
    }
}
