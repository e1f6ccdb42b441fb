// libFuzzer entry for ParlanceSchema: arbitrary bytes → JSONParser → (as a schema)
// GrammarBuilder.gbnf, and SchemaValidator.validate(value, against: value).
// Built as one module with the sources of ParlanceJSON and ParlanceSchema (it uses internal API):
//   swiftc -sanitize=fuzzer,address -parse-as-library -module-name ParlanceSchema \
//     Sources/ParlanceJSON/*.swift Sources/ParlanceSchema/*.swift fuzz/schema/entry.swift -o /tmp/fuzz-schema
//   /tmp/fuzz-schema -max_total_time=30 /tmp/corpus-schema fuzz/corpus/schema
#if canImport(ParlanceJSON)
import ParlanceJSON
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard let value = try? JSONParser.parse(UnsafeBufferPointer(start: data, count: size)) else { return 0 }
    if let grammar = try? GrammarBuilder.gbnf(for: value) {
        precondition(grammar.hasPrefix("root ::= "), "grammar without a root rule")
        var defined: Set<String> = []
        var bodies: [String] = []
        for line in grammar.split(separator: "\n") {
            guard let r = line.range(of: " ::= ") else { preconditionFailure("malformed rule: \(line)") }
            precondition(defined.insert(String(line[..<r.lowerBound])).inserted, "rule defined twice: \(line)")
            bodies.append(String(line[r.upperBound...]))
        }
        for body in bodies {
            for name in GrammarRules.references(body) { precondition(defined.contains(name), "undefined rule \(name)") }
        }
    }
    for v in SchemaValidator.validate(value, against: value) {
        precondition(!v.message.isEmpty && !v.path.isEmpty && !v.keyword.isEmpty, "empty violation")
    }
    return 0
}
