/// A string the grammar closed while the model meant to go on. A small model that quotes a
/// name inside a JSON value (`a feature called "Scan"`) writes `"`, which in JSON ends the
/// value; the grammar then forces `,` and the next key, and the sentence spills into the
/// keys that follow (`"mainTopics": ["keyTakeaways", "high] to the podcast…"`).
///
/// The guard watches for that moment at decoding time: a string closed right after
/// whitespace (`called "`), and the token after the close one the grammar has to override
/// (the model's own first choice is not admissible there: it wanted a word, not `,` `}` or
/// `]`). A value closed after its last word or full stop is never touched, even where the
/// model would have written on. Then the close is taken back:
/// its cell leaves the KV cache, the sampler returns to its state before it, and the same
/// position is sampled again from its saved logits with every token holding `"` refused,
/// so the value goes on. An ordinary close (the model's next choice admissible) costs
/// nothing but a copy of one logits row. A string is reopened at most `reopensPerString`
/// times, so a model that keeps closing it ends it (no run-on), and where nothing but a
/// close is admissible (a key the grammar spells out, a string at its `maxLength`) the
/// close stands.
///
/// Only for requests with a grammar; `GenerationSettings.spillGuard` false generates as
/// without it, token for token.
struct JSONStringLexer: Equatable {
    private(set) var inString = false
    private var escaped = false
    /// The string's last character was whitespace (a space, or an escaped newline or tab).
    private var afterSpace = false
    /// Strings opened so far (the current one's number while inside it).
    private(set) var opened = 0

    /// Reads a token's text; true when a string closed in it right after whitespace and the
    /// text ends outside any string (`"`, `",`, `"}`, not `","`): the close of a model that
    /// meant to open a quote (`called "`), never that of a finished value (`editor."`).
    mutating func read(_ text: String) -> Bool {
        var closedAfterSpace = false
        for b in text.utf8 {
            if inString {
                if escaped {
                    escaped = false
                    afterSpace = b == 0x6E || b == 0x74 || b == 0x72  // \n \t \r
                } else if b == 0x5C {
                    escaped = true
                } else if b == 0x22 {
                    inString = false
                    closedAfterSpace = afterSpace
                } else {
                    afterSpace = b == 0x20 || b == 0x0A || b == 0x09 || b == 0x0D
                }
            } else if b == 0x22 {
                inString = true
                afterSpace = false
                opened += 1
            }
        }
        return closedAfterSpace && !inString
    }
}

/// A string's closing token, emitted but not yet streamed: what is needed to take it back.
final class TentativeClose {
    /// The sampler as it was before the close, and the logits the close was sampled from.
    let sampler: LlamaSampler
    let logits: [Float]
    /// The job's own state before the close.
    let text: UTF8Accumulator
    let repeats: RepeatGuard?
    let numbers: NumberGuard?
    let words: WordGuard?
    let facts: FactGuard?
    let index: NGramIndex?
    let lexer: JSONStringLexer
    let generated: Int
    /// The close's text, streamed once the close stands.
    var delta = ""

    /// Taken before the close changes anything of the job's.
    init(sampler: LlamaSampler, logits: [Float], job j: Job) {
        (self.sampler, self.logits) = (sampler, logits)
        (text, repeats, numbers, words, facts, index, lexer, generated) = (j.text, j.repeats, j.numbers, j.words, j.facts, j.index, j.lexer, j.generated.count)
    }

    /// Puts the job back as it was before the close (its KV cell is the caller's to drop).
    func restore(_ j: Job) {
        (j.text, j.repeats, j.numbers, j.words, j.facts, j.index, j.lexer) = (text, repeats, numbers, words, facts, index, lexer)
        j.generated.removeSubrange(generated...)
        j.sampler = sampler
        j.reopens = (lexer.opened, j.reopens.string == lexer.opened ? j.reopens.count + 1 : 1)
        j.spillsUndone += 1
    }
}

extension Scheduler {
    /// A value may name a few things in quotes; a model that closes it more often than this
    /// means to end it.
    static let reopensPerString = 3

    /// Before `tok` is accepted (its text `text`, sampled from the logits at `index`): reads
    /// it into the job's lexer and, when it closes a string of a guarded request right after
    /// whitespace (a string reopened fewer than `reopensPerString` times, outside a verified
    /// draft), keeps what taking it back would need.
    func holdIfClose(_ j: Job, _ tok: Token, text: String, index: Int32) -> TentativeClose? {
        guard j.request.grammar != nil, j.request.spillGuard else { return nil }
        var after = j.lexer
        defer { j.lexer = after }
        guard after.read(text), j.armable, j.reopens.string != j.lexer.opened || j.reopens.count < Self.reopensPerString, let sampler = j.sampler, let copy = sampler.copy(),
              let row = ctx.logitsRow(index, count: model.vocabularySize) else { return nil }
        return TentativeClose(sampler: copy, logits: row, job: j)
    }

    /// After the close was decoded, with the logits of the position after it at `index`: a
    /// replacement for the close when the grammar overrides the model there and another
    /// token is admissible in the close's place; nil when the close stands.
    func replacement(for t: TentativeClose, of j: Job, index: Int32) -> Token? {
        guard let sampler = j.sampler, !sampler.admitsTop(ctx, index: index) else { return nil }
        let banned = quoteTokens + (t.repeats?.banned ?? []) + (t.numbers?.banned ?? []) + (t.words?.banned ?? [])
        let r = t.sampler.sample(row: t.logits, banned: banned)
        return r >= 0 ? r : nil
    }
}

extension LlamaModel {
    /// The tokens whose text holds a `"`.
    func quoteTokens() -> [Token] {
        (0..<Token(vocabularySize)).filter { piece($0).contains(0x22) }
    }
}
