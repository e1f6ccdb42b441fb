import Foundation
import ParlanceJSON
import ParlanceProtocol
import XCTest

@testable import ParlanceCLI

/// The command line's one option type: what parsing accepts, `--help`, the man page and
/// the completions list (the same values), and the rules each kind of option has always
/// followed. No model, no server: parsing only.
final class OptionTests: XCTestCase {
    let settings = DaemonSettings(env: [:])

    func command(_ name: String, _ args: [String]) throws -> (positionals: [String], values: OptionValues)? {
        try Parser.command(Command.named(name)!, settings, args)
    }

    func usageError(_ name: String, _ args: [String]) -> UsageError? {
        do { _ = try command(name, args) } catch let e as UsageError { return e } catch { return nil }
        return nil
    }

    /// Every option parsing accepts is in `--help`, the man page and every shell's completions.
    func testEveryOptionIsDocumented() {
        let man = Manual.man()
        let completions = ["bash", "zsh", "fish"].map { Manual.completion($0)! }
        for c in Command.all {
            let help = Manual.help(c)
            for o in c.options {
                XCTAssertTrue(help.contains("  " + o.name), "\(c.name) --help lacks \(o.name)")
                XCTAssertTrue(man.contains(Manual.roff(o.name)), "the man page lacks \(c.name) \(o.name)")
                for (shell, script) in zip(["bash", "zsh", "fish"], completions) {
                    let word = shell == "fish" ? "-l " + o.name.dropFirst(2) : o.name
                    XCTAssertTrue(script.contains(word), "\(shell) completion lacks \(c.name) \(o.name)")
                }
                if o.negate != nil {
                    XCTAssertTrue(completions[0].contains("--no-" + o.name.dropFirst(2)), "bash completion lacks --no-\(o.name.dropFirst(2))")
                }
            }
        }
        for o in DaemonOptions.all {
            XCTAssertTrue(Manual.usage.contains("  " + o.name), "--help lacks \(o.name)")
            XCTAssertTrue(man.contains(Manual.roff(o.name)), "the man page lacks \(o.name)")
        }
        XCTAssertTrue(man.contains(Manual.roff(DaemonOptions.stdio.name)))
    }

    /// A command's own and its method's options come before the daemon's of the same name.
    func testCommandOptionsWinOverTheDaemons() throws {
        let rewrite = try XCTUnwrap(try command("rewrite", ["--speculative", "on"]))
        XCTAssertEqual(rewrite.values.params["speculative"], .bool(true))
        XCTAssertEqual(rewrite.positionals, ["on"])
        XCTAssertFalse(rewrite.values.settings.explicit.contains("--speculative"))
        let chat = try XCTUnwrap(try command("chat", ["--mcp-server", "a", "--max-tokens", "x"]))
        XCTAssertEqual(chat.values.params["mcpServers"], .array([.string("a")]))
        XCTAssertTrue(chat.values.settings.mcpServers.isEmpty)
        XCTAssertEqual(chat.values.own["--max-tokens"], "x")
        let daemon = try XCTUnwrap(try command("summarize", ["--speculative=off", "f"]))
        XCTAssertEqual(daemon.values.settings.engine.speculative, false)
        XCTAssertTrue(daemon.values.settings.explicit.contains("--speculative"))
    }

    /// Switches given a value: the daemon's refuse it, a method's booleans ignore it, and
    /// `--json` is only the bare word.
    func testSwitchesGivenAValue() throws {
        XCTAssertEqual(usageError("summarize", ["--no-history=1", "f"])?.description, "--no-history takes no value")
        XCTAssertEqual(usageError("summarize", ["--json=1", "f"])?.description, "unknown option '--json=1' for summarize")
        XCTAssertEqual(usageError("summarize", ["--json=1", "f"])?.command, "summarize")
        let verify = try XCTUnwrap(try command("summarize", ["--verify=false", "f"]))
        XCTAssertEqual(verify.values.params["verify"], .bool(true))
        let noVerify = try XCTUnwrap(try command("summarize", ["--no-verify", "--json", "f"]))
        XCTAssertEqual(noVerify.values.params["verify"], .bool(false))
        XCTAssertTrue(noVerify.values.json)
        XCTAssertThrowsError(try Parser.daemon(settings, ["--stdio=1"])) { e in
            XCTAssertEqual((e as? UsageError)?.description, "unknown argument '--stdio=1'")
        }
        XCTAssertNoThrow(try Parser.daemon(settings, ["--stdio", "--no-history"]))
    }

    func testValuesAndErrors() throws {
        XCTAssertEqual(usageError("summarize", ["f", "--max-tokens"])?.description, "--max-tokens needs a value (N)")
        XCTAssertEqual(usageError("rewrite", ["--tone", "loud"])?.description,
                       "--tone must be one of formal, casual, empathetic, direct, diplomatic, got 'loud'")
        XCTAssertEqual(usageError("summarize", ["--ctx=1", "f"])?.description, "--ctx must be an integer in 128...131072, got '1'")
        XCTAssertEqual(usageError("ask", ["f"])?.description, "ask takes 2 to 17 arguments (usage: parlance ask [OPTIONS] FILE... QUESTION), got 1")
        // Several files then the question; more than AskStream.maxDocuments files is a usage error.
        XCTAssertEqual(try command("ask", ["a.srt", "b.srt", "c.vtt", "what?"])?.positionals, ["a.srt", "b.srt", "c.vtt", "what?"])
        XCTAssertEqual(usageError("ask", (0...AskStream.maxDocuments).map { "f\($0)" } + ["q"])?.description,
                       "ask takes 2 to 17 arguments (usage: parlance ask [OPTIONS] FILE... QUESTION), got 18")
        let tones = try XCTUnwrap(try command("rewrite", ["--tone", "formal", "--tone=casual", "--max-tokens=64", "--", "-x"]))
        XCTAssertEqual(tones.values.params["tones"], .array([.string("formal"), .string("casual")]))
        XCTAssertEqual(tones.values.params["maxTokens"], .int(64))
        XCTAssertEqual(tones.positionals, ["-x"])
        XCTAssertNil(try command("summarize", ["--help", "--bogus"]))
        XCTAssertEqual(usageError("summarize", ["--bogus", "--help"])?.description, "unknown option '--bogus' for summarize")
    }

    /// The models are kept once: `--model`s in order, replacing $PARLANCE_MODEL's.
    func testModelsAreKeptOnce() throws {
        let env = DaemonSettings(env: ["PARLANCE_MODEL": "env.gguf"])
        XCTAssertTrue(env.registry.flagModels.isEmpty)
        let flags = try Parser.daemon(env, ["--stdio", "--model", "a=one.gguf", "--model", "two.gguf"])
        XCTAssertEqual(flags.registry.flagModels.map(\.path), ["one.gguf", "two.gguf"])
        XCTAssertEqual(flags.registry.flagModels.map(\.name), ["a", nil])
    }

    func testOptionValuesAreNotCommands() {
        XCTAssertTrue(Parser.isOptionValue(["--model", "summarize", "summarize"], "summarize"))
        XCTAssertFalse(Parser.isOptionValue(["--model=x", "summarize"], "summarize"))
        XCTAssertFalse(Parser.isOptionValue(["--no-history", "summarize"], "summarize"))
    }
}
