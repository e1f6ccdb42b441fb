import Foundation

// Figures the bench sections share (beside `round2` and `log` in main.swift).

/// The middle figure (of an even count, the upper of the two middle ones); 0 for none.
func upperMedian(_ xs: [Double]) -> Double { xs.isEmpty ? 0 : xs.sorted()[xs.count / 2] }

/// Milliseconds from `start` to now.
func milliseconds(since start: Date) -> Double { Date().timeIntervalSince(start) * 1000 }
