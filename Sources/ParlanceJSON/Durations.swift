/// A `Duration` as the numbers results, logs and timeouts carry: seconds or milliseconds
/// as a `Double`. The one conversion; callers round as their field needs.
extension Duration {
    public var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    public var inMilliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15 }
}
