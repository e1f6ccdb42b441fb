import ParlanceSchema

/// The Context Composer seed's tones and audiences.
public enum Tone: String, Codable, Sendable, CaseIterable, SchemaEnum {
    case formal, casual, empathetic, direct, diplomatic
}

public enum Audience: String, Codable, Sendable, CaseIterable, SchemaEnum {
    case executive, peer, client, team, `public`
}
