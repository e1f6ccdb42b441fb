import ParlanceJSON
import ParlanceSchema

/// The controls every generating method takes beside its own input: listed, typed and
/// described once. A method names the ones it takes (`GenerationInput.controls`); the others
/// are not in its schema, so a request that sends one is rejected as an unknown property.
public struct GenerationControls: Sendable, Hashable {
    public enum Key: String, CodingKey, CaseIterable, Sendable {
        case maxTokens, temperature, topP, topK, minP, seed, deterministic, speculative, verify, maxAttempts, model, refresh, workDoneToken
    }
    public var maxTokens: Int?
    public var temperature: Double?
    /// Sampling as a session's options take it (`GenerationOptions`): same names, same ranges.
    public var topP: Double?
    public var topK: Int?
    public var minP: Double?
    public var seed: Int?
    public var deterministic: Bool?
    public var speculative: Bool?
    public var verify: Bool?
    public var maxAttempts: Int?
    public var model: String?
    /// Skip the analysis cache's read (the result is made again, and cached).
    public var refresh: Bool?
    public var workDoneToken: JSONValue?

    /// None set: each method's defaults.
    public init() {}

    /// Reads the controls in `keys` (in that order, so the schema lists them so).
    public init(from decoder: any Decoder, keys: [Key]) throws {
        self.init()
        let c = try decoder.container(keyedBy: Key.self)
        for key in keys {
            switch key {
            case .maxTokens: maxTokens = try c.decodeIfPresent(Int.self, forKey: key)
            case .temperature: temperature = try c.decodeIfPresent(Double.self, forKey: key)
            case .topP: topP = try c.decodeIfPresent(Double.self, forKey: key)
            case .topK: topK = try c.decodeIfPresent(Int.self, forKey: key)
            case .minP: minP = try c.decodeIfPresent(Double.self, forKey: key)
            case .seed: seed = try c.decodeIfPresent(Int.self, forKey: key)
            case .deterministic: deterministic = try c.decodeIfPresent(Bool.self, forKey: key)
            case .speculative: speculative = try c.decodeIfPresent(Bool.self, forKey: key)
            case .verify: verify = try c.decodeIfPresent(Bool.self, forKey: key)
            case .maxAttempts: maxAttempts = try c.decodeIfPresent(Int.self, forKey: key)
            case .model: model = try c.decodeIfPresent(String.self, forKey: key)
            case .refresh: refresh = try c.decodeIfPresent(Bool.self, forKey: key)
            case .workDoneToken: workDoneToken = try c.decodeIfPresent(JSONValue.self, forKey: key)
            }
        }
    }

    /// Writes the controls in `keys` that are set.
    public func encode(to encoder: any Encoder, keys: [Key]) throws {
        var c = encoder.container(keyedBy: Key.self)
        for key in keys {
            switch key {
            case .maxTokens: try c.encodeIfPresent(maxTokens, forKey: key)
            case .temperature: try c.encodeIfPresent(temperature, forKey: key)
            case .topP: try c.encodeIfPresent(topP, forKey: key)
            case .topK: try c.encodeIfPresent(topK, forKey: key)
            case .minP: try c.encodeIfPresent(minP, forKey: key)
            case .seed: try c.encodeIfPresent(seed, forKey: key)
            case .deterministic: try c.encodeIfPresent(deterministic, forKey: key)
            case .speculative: try c.encodeIfPresent(speculative, forKey: key)
            case .verify: try c.encodeIfPresent(verify, forKey: key)
            case .maxAttempts: try c.encodeIfPresent(maxAttempts, forKey: key)
            case .model: try c.encodeIfPresent(model, forKey: key)
            case .refresh: try c.encodeIfPresent(refresh, forKey: key)
            case .workDoneToken: try c.encodeIfPresent(workDoneToken, forKey: key)
            }
        }
    }

    /// How each control is described unless the method says it more precisely.
    public static let hints: [String: SchemaHint] = [
        "maxTokens": SchemaHint(description: "Upper bound on generated tokens."),
        "temperature": SchemaHint(minimum: 0, maximum: 2),
        // A session's options say these once (names and ranges); a request's controls are the same.
        "topP": GenerationOptions.schemaHints["topP"]!,
        "topK": GenerationOptions.schemaHints["topK"]!,
        "minP": GenerationOptions.schemaHints["minP"]!,
        "seed": SchemaHint(minimum: 0, maximum: 4_294_967_295),
        "deterministic": .deterministic,
        "speculative": .speculative,
        "verify": .verify,
        "maxAttempts": .maxAttempts,
        "model": .model,
        "refresh": SchemaHint(description: "Make the result again instead of answering from the analysis cache (its part notes too, for a long transcript); the new result replaces the cached one. Default false."),
        "workDoneToken": SchemaHint(description: "LSP work-done token: progress and streamed output arrive as $/progress."),
    ]
}

/// A generating method's own input (`AskStream.Input`, …): its fields, and which controls
/// it takes after them.
public protocol GenerationInput: Codable, Sendable, Schematic {
    static var controls: [GenerationControls.Key] { get }
}

extension GenerationInput {
    /// What a method that writes one result from a document takes.
    public static var controls: [GenerationControls.Key] {
        [.temperature, .topP, .topK, .minP, .seed, .deterministic, .verify, .maxAttempts, .model, .refresh, .workDoneToken]
    }
}

/// A method that generates from its input: its params are that input and its controls.
public protocol GeneratingMethod: RPCMethod where Params == GenerationParams<Input> {
    associatedtype Input: GenerationInput
}

extension GeneratingMethod {
    public static var errors: [ProtocolError] { .generatingFromSource }
}

/// A generating method's params: its input, then the controls it takes, one flat object on
/// the wire (and in the schema), read and written as one struct (`p.question`, `p.seed`).
@dynamicMemberLookup
public struct GenerationParams<Input: GenerationInput>: Codable, Sendable, Schematic {
    public var input: Input
    public var controls: GenerationControls

    public init(_ input: Input, _ controls: GenerationControls = GenerationControls()) {
        self.input = input
        self.controls = controls
    }
    public init(from decoder: any Decoder) throws {
        input = try Input(from: decoder)
        controls = try GenerationControls(from: decoder, keys: Input.controls)
    }
    public func encode(to encoder: any Encoder) throws {
        try input.encode(to: encoder)
        try controls.encode(to: encoder, keys: Input.controls)
    }

    public subscript<T>(dynamicMember key: WritableKeyPath<Input, T>) -> T {
        get { input[keyPath: key] }
        set { input[keyPath: key] = newValue }
    }
    public subscript<T>(dynamicMember key: WritableKeyPath<GenerationControls, T>) -> T {
        get { controls[keyPath: key] }
        set { controls[keyPath: key] = newValue }
    }

    public static var schemaHints: [String: SchemaHint] {
        GenerationControls.hints.filter { Input.controls.map(\.rawValue).contains($0.key) }.merging(Input.schemaHints) { _, own in own }
    }
    public static var schemaDescription: String? { Input.schemaDescription }
    public static var schemaTitle: String { "Params" }
}
